import { Screen } from '../../ui/parts';

export default function Placeholder() {
  return <Screen title="admin/runs">Being built.</Screen>;
}
