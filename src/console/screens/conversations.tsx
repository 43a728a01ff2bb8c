import { Screen } from '../ui/parts';

export default function Placeholder() {
  return <Screen title="conversations">Being built.</Screen>;
}
