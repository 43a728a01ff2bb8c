import { Screen } from '../ui/parts';

export default function Placeholder() {
  return <Screen title="webhooks">Being built.</Screen>;
}
