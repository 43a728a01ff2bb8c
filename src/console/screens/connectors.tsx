import { Screen } from '../ui/parts';

export default function Placeholder() {
  return <Screen title="connectors">Being built.</Screen>;
}
