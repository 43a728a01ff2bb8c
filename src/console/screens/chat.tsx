import { Screen } from '../ui/parts';

export default function Placeholder() {
  return <Screen title="chat">Being built.</Screen>;
}
