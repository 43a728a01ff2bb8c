import { Screen } from '../ui/parts';

export default function Placeholder() {
  return <Screen title="schedules">Being built.</Screen>;
}
