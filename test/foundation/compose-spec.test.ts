import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

/**
 * docker-compose.yml against the Compose Specification's JSON schema (draft-07, ajv's default
 * draft), committed at deploy/compose-spec.json (its source: deploy/README.md). Docker is not
 * installed where the suite runs, so `docker compose config` cannot; the schema can.
 */
const schema = JSON.parse(readFileSync('deploy/compose-spec.json', 'utf8'));
// The schema's own `format` is a property name (env_file's), not the keyword: no format checks needed.
const ajv = new Ajv({ allErrors: true, strict: false });
// It names draft-07 by its https address; ajv knows the meta-schema as `http://json-schema.org/draft-07/schema#`.
ajv.addMetaSchema(createRequire(import.meta.url)('ajv/dist/refs/json-schema-draft-07.json'), schema.$schema);
const validate = ajv.compile(schema);
// Compose reads YAML 1.1's merge keys (`<<: *app`); interpolation (`${SECRET_KEY:?…}`) leaves strings.
const load = (text: string) => parse(text, { merge: true }) as Record<string, unknown>;
const composeText = readFileSync('docker-compose.yml', 'utf8');

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification', () => {
    const valid = validate(load(composeText));
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
  });

  it('the validation bites: a misspelt service key, a command of the wrong type and an unknown depends_on condition are refused', () => {
    const broken = [
      composeText.replace('    stop_grace_period: 30s', '    stop_grace_periode: 30s'),
      composeText.replace('    command: ["node", "dist/services/gateway.js"]', '    command: { node: dist/services/gateway.js }'),
      composeText.replace('condition: service_completed_successfully', 'condition: service_finished'),
    ];
    for (const text of broken) {
      expect(text).not.toBe(composeText);
      expect(validate(load(text)), text).toBe(false);
    }
  });
});
