import { Screen } from '../ui/parts';

export default function Placeholder() {
  return <Screen title="keys">Being built.</Screen>;
}
