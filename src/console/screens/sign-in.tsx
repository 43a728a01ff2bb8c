import { useState } from 'preact/hooks';
import { valueOf } from '../ui/forms';
import { useConsole } from '../context';
import { useAction } from '../ui/async';
import { ErrorNotice, Field } from '../ui/parts';

export function SignIn() {
  const { session } = useConsole();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useAction(() => session.login(email, password));
  return (
    <main class="sign-in" id="main">
      <form
        aria-labelledby="sign-in-title"
        onSubmit={(event) => {
          event.preventDefault();
          void signIn.run();
        }}
      >
        <h1 id="sign-in-title">Sign in to Agent Platform</h1>
        {session.lastReason === 'expired' && (
          <p class="notice" role="status">
            Your session has ended. Sign in again to go on.
          </p>
        )}
        <Field label="Email" type="email" name="email" autoComplete="username" required value={email} onInput={(e: Event) => setEmail(valueOf(e))} />
        <Field label="Password" type="password" name="password" autoComplete="current-password" required value={password} onInput={(e: Event) => setPassword(valueOf(e))} />
        <ErrorNotice error={signIn.error} />
        <button type="submit" disabled={signIn.busy}>
          {signIn.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
