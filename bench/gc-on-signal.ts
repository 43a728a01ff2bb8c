/**
 * Preloaded (`node --expose-gc --import …/gc-on-signal.js`) into every process whose memory a bench
 * samples, so each can be sent SIGUSR2 to collect garbage before a sample: heap and RSS figures then
 * show what is live, not when the last collection happened to run.
 */
const gc = (globalThis as { gc?: () => void }).gc;
if (gc) process.on('SIGUSR2', () => gc());
