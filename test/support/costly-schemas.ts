/** Schemas whose work is far past their bytes (issue 44), shared by the unit and end-to-end tests. */

/** `uses` properties referencing a definition of `defined` properties: 150 × 150 is 22,650 subschemas in 8 KB. */
export const fanOut = (defined: number, uses: number) => ({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: uses }, (_, i) => [`r${i}`, { $ref: '#/$defs/D' }])),
  $defs: { D: { type: 'object', properties: Object.fromEntries(Array.from({ length: defined }, (_, i) => [`q${i}`, { type: 'string' }])) } },
});

/** a0 → a1 twice → … → a(links) = {type: object}: 2^links paths in about 65 bytes a link. */
export const allOfChain = (links: number) => ({
  $ref: '#/$defs/a0',
  $defs: Object.fromEntries([...Array.from({ length: links }, (_, i) => [`a${i}`, { allOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] }]), [`a${links}`, { type: 'object' }]]),
});
