// `npm run build:client`: writes the typed client's declarations (client/src/public.d.ts and
// management.d.ts) from the operation registry; test/foundation/client.test.ts checks the
// committed ones equal a fresh generation.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tsImport } from 'tsx/esm/api';
import { ROOT } from './setup.mjs';

const { generateClientTypes } = await tsImport('./client-types.ts', import.meta.url);
const files = await generateClientTypes();
for (const [file, text] of Object.entries(files)) {
  writeFileSync(path.join(ROOT, 'client', 'src', file), text);
  console.log(`wrote client/src/${file}`);
}
