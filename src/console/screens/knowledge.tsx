import { Screen } from '../ui/parts';

export default function Placeholder() {
  return <Screen title="knowledge">Being built.</Screen>;
}
