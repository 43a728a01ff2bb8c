import { afterAll, afterEach } from 'vitest';
import { installContractCheck, takeMismatches } from './contract.js';

/** Every test file checks the responses it receives against /openapi.json (test/support/contract.ts). */
installContractCheck();

function failOnMismatch(): void {
  const found = takeMismatches();
  if (found.length > 0) throw new Error(`Responses that do not match /openapi.json:\n- ${found.join('\n- ')}`);
}

afterEach(failOnMismatch);
afterAll(failOnMismatch);
