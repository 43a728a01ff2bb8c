import { routeParts } from '../router';
import { ScheduleDetail } from './schedules/detail';
import { ScheduleList } from './schedules/list';

/** Schedules (DESIGN §19): '/schedules' lists and creates them, '/schedules/{id}' is one with its runs. */
export default function SchedulesScreen({ route }: { route: string }) {
  const [id] = routeParts(route, '/schedules');
  return id ? <ScheduleDetail key={id} id={id} /> : <ScheduleList />;
}
