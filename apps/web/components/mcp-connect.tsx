/**
 * "Connect <server>" for an OAuth MCP server a turn found unauthorised (issue 43): a tool result
 * saying "MCP server X needs authorisation" gets the button. It starts the login for the key's
 * tenant (and user) — `POST /v1/mcp-servers/X/oauth` → `{ authorizationUrl }` — and opens the
 * authorization server in a new tab; the server sends that tab back to the gateway's callback,
 * which stores the tokens (sealed) and says so. The next turn's calls use them.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';

const NEEDS_AUTH = /MCP server ([a-z][a-z0-9_]{0,39}) needs authorisation/;

/** The server a tool result asks a person to authorise, if any. */
export const serverNeedingAuth = (text: string | undefined) => (text ? NEEDS_AUTH.exec(text)?.[1] : undefined);

export function McpConnect({ server }: { server: string }) {
  const [state, setState] = useState<'idle' | 'opening' | 'opened' | { error: string }>('idle');
  const connect = async () => {
    setState('opening');
    // Opened now, inside the click (a tab opened after an await is a pop-up the browser may block).
    const tab = window.open('about:blank', '_blank');
    // The authorization server's page gets no handle on this one (reverse tabnabbing).
    if (tab) tab.opener = null;
    try {
      const { authorizationUrl } = await api<{ authorizationUrl: string }>(
        'POST',
        `/v1/mcp-servers/${encodeURIComponent(server)}/oauth`,
        {},
      );
      if (tab) tab.location.href = authorizationUrl;
      else window.location.assign(authorizationUrl);
      setState('opened');
    } catch (e) {
      tab?.close();
      setState({ error: (e as Error).message });
    }
  };
  return (
    <div class="mcp-connect" role="group" aria-label={`MCP server ${server}`}>
      <button type="button" onClick={() => void connect()} disabled={state === 'opening'}>
        Connect {server}
      </button>
      <span class="mcp-connect-note" aria-live="polite">
        {state === 'opened'
          ? 'Authorise in the new tab, then ask again.'
          : typeof state === 'object'
            ? state.error
            : `${server} needs you to authorise durable-react.`}
      </span>
    </div>
  );
}
