/**
 * Workers' providers over the repo's emulators (the real SDKs, pointed at loopback): the provider
 * registry over the Anthropic and OpenAI emulators, with the scripted model as the default for turns
 * that name none; and the Anthropic provider over the Anthropic emulator, alone or beside the
 * scripted model.
 */
import { defaultProviderResolver } from '../../activities/model/registry';
import { createAnthropicProvider } from '../../activities/model/adapters/anthropic';
import { createScriptedProvider, resolveScript } from '../../activities/model/adapters/scripted';
import type { ActivityDeps } from '../../activities/deps';
import type { ModelProvider } from '../../core/model/provider';

export function emulatedProviders(
  emulators: { anthropic: { baseURL: string }; openai: { baseURL: string } },
  env: NodeJS.ProcessEnv = {},
): ReturnType<typeof defaultProviderResolver> {
  return defaultProviderResolver(
    {
      ANTHROPIC_API_KEY: 'test',
      ANTHROPIC_BASE_URL: emulators.anthropic.baseURL,
      OPENAI_API_KEY: 'test',
      OPENAI_BASE_URL: emulators.openai.baseURL,
      ...env,
    },
    { provider: 'scripted' },
  );
}

/** The Anthropic provider over the emulator at `emu`, answering as `model`. */
export function emulatedAnthropic(emu: { baseURL: string }, model = 'claude-sonnet-5-5'): ModelProvider {
  return createAnthropicProvider({ baseURL: emu.baseURL, apiKey: 'test-key', model });
}

/**
 * A worker's provider: Anthropic over the emulator at `emu` (one provider, built once) for turns
 * whose model is Anthropic's, the scripted model (the turn's script) for the others.
 */
export function anthropicOrScripted(emu: { baseURL: string }, model = 'claude-sonnet-5-5'): ActivityDeps['provider'] {
  const anthropic = emulatedAnthropic(emu, model);
  return (cfg) => (cfg.provider === 'anthropic' ? anthropic : createScriptedProvider(resolveScript(cfg.script)));
}
