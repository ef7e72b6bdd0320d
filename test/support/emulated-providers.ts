/**
 * The worker's provider registry over the repo's Anthropic and OpenAI emulators (the real SDKs,
 * pointed at loopback), with the scripted model as the default for turns that name none.
 */
import { defaultProviderResolver } from '../../activities/model/registry';

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
