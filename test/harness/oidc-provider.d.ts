// oidc-provider ships no types (its @types package lags its major versions); the test harness uses a few calls of it
declare module 'oidc-provider' {
  const Provider: any
  type Provider = any
  export default Provider
}
