# After any dependency change: python3 .ci/lockfile-platforms.py package-lock.json
# The registry this project installs from lacks msgpackr-extract's non-Linux optional binaries, so npm
# leaves them out of the lock and `npm ci` then refuses it as out of sync. Inert entries (os/cpu that never
# match here, never fetched) keep it in sync.
import json, sys
path = sys.argv[1]
lock = json.load(open(path))
pkgs = lock['packages']
platforms = {'darwin-arm64': ('darwin', 'arm64'), 'darwin-x64': ('darwin', 'x64'), 'linux-arm': ('linux', 'arm'), 'win32-x64': ('win32', 'x64')}
for name, (os_, cpu) in platforms.items():
    key = f'node_modules/@msgpackr-extract/msgpackr-extract-{name}'
    if key not in pkgs:
        pkgs[key] = {'version': '3.0.7', 'cpu': [cpu], 'license': 'MIT', 'optional': True, 'os': [os_]}
lock['packages'] = dict(sorted(pkgs.items(), key=lambda kv: (kv[0] != '', kv[0])))
json.dump(lock, open(path, 'w'), indent=2)
open(path, 'a').write('\n')
