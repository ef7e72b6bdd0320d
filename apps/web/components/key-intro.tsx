/**
 * The first visit (no API key stored yet, or the gateway refused the one given): what the key is,
 * how to make one, and where to paste it — instead of the gateway's bare "missing API key".
 */
export function KeyIntro({ refused }: { refused: string }) {
  return (
    <section class="key-intro" aria-labelledby="key-intro-title">
      <h1 id="key-intro-title">Welcome to the durable-react chat</h1>
      {refused ? (
        <p role="alert">The gateway did not accept this key: {refused}</p>
      ) : (
        <p>This page talks to your gateway with an API key, kept in this browser only.</p>
      )}
      <ol>
        <li>
          Make a key on the machine that runs the stack:{' '}
          <code>npx dreact keys create --tenant T --project P --scopes read,write,approve</code> (the key is the last
          line it prints).
        </li>
        <li>
          Paste it into <strong>API key</strong> in the conversations panel and press <strong>Use key</strong>.
        </li>
        <li>Start a conversation with New conversation.</li>
      </ol>
    </section>
  );
}
