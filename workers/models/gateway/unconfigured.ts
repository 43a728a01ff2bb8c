import { RunFailure } from '../../runs/run-control.js';
import type { ModelProvider, ModelRequest } from '../types.js';

/**
 * Stands in for the gateway on a worker started without GATEWAY_URL: a run of an agent saved
 * while one was configured ends with a clear error instead of a crash.
 */
export class UnconfiguredGateway implements ModelProvider {
  readonly deterministic = true;

  private refuse(model: string): never {
    throw new RunFailure('gateway_not_configured', `model "${model}" runs on the model gateway, and this worker has no GATEWAY_URL`);
  }

  async complete(request: ModelRequest): Promise<never> {
    this.refuse(request.model);
  }

  async plan(request: { model: string }): Promise<never> {
    this.refuse(request.model);
  }

  async summarize(request: { model: string }): Promise<never> {
    this.refuse(request.model);
  }
}
