/**
 * The agent of a new conversation (GET /v1/agents): shown until the conversation's first turn
 * binds it — a conversation keeps its agent, so the picker is gone afterwards.
 */
export interface AgentOption {
  name: string;
  description: string | null;
  hash: string;
  tools: string[];
}

export function AgentPicker({
  agents,
  value,
  onChange,
}: {
  agents: AgentOption[];
  value: string;
  onChange: (name: string) => void;
}) {
  if (agents.length < 2) return null;
  const picked = agents.find((a) => a.name === value);
  return (
    <label class="agent-picker">
      Agent
      <select aria-label="agent" value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {agents.map((a) => (
          <option key={a.name} value={a.name} title={a.description ?? ''}>
            {a.name}
          </option>
        ))}
      </select>
      {picked?.description && <span class="agent-description">{picked.description}</span>}
    </label>
  );
}
