/** Settings the gateway serves at /config.json, read once before the first render (app.tsx). */
export const config = { temporalUiUrl: '' as string, temporalNamespace: 'default' as string };
