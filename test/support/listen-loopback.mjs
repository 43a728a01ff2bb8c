// Preloaded (node --import) into servers the tests start: a listen() given only a port binds 127.0.0.1, not every
// interface, and the port actually bound is printed, so a test can ask for port 0.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === 'number' || typeof args[0] === 'string') && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  this.once('listening', () => process.stderr.write(`loopback-listening ${this.address().port}\n`));
  return listen.apply(this, args);
};
