// Breaks features-never-import-http.
import { route } from '../http/route.ts';

export const thing = route;
