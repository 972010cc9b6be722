/**
 * Writes docs/openapi.json from src/http/openapi.ts (the document the server serves with default limits).
 * Run: npx tsx scripts/write-openapi.ts
 * @module
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../src/http/openapi.js';

const target = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));
writeFileSync(target, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log(`wrote ${target}`);
