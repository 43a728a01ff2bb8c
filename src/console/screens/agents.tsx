import { Screen } from '../ui/parts';

export default function Placeholder() {
  return <Screen title="agents">Being built.</Screen>;
}
