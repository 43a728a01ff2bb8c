/** A document that cannot be ingested as it is: it ends `failed` with this message as the reason. */
export class IngestionError extends Error {}
