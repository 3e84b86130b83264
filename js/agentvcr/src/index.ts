// The agentvcr package: run the recording proxy from Node tests and drive
// it through its typed control API.
export { startProxy } from './proxy.js';
export type { Proxy, ProxyOptions } from './proxy.js';
export { Control, ControlError, ScopeFailedError } from './control.js';
export type { ControlOptions, FaultTarget, SlackControl, WaitIdleOptions } from './control.js';
export type {
  EventStream,
  EventsOptions,
  OnProgressOptions,
  ProgressActions,
  ProgressEvent,
  ProgressHandler,
  Subscription,
} from './events.js';
export { ScriptedModel } from './model.js';
export type {
  AgentRef,
  OutputAnswer,
  PromptMatcher,
  ProviderErrorAnswer,
  Script,
  ScriptAnswer,
  TextAnswer,
  ToolCallsAnswer,
  TruncatedAnswer,
} from './model.js';
export { resolveBinary } from './binary.js';
export type {
  components,
  paths,
  operations,
  Dialect,
  DoneEvent,
  ErrorEvent,
  EventType,
  FakeAgent,
  FakeCalls,
  FakeEmbedding,
  FakeExchange,
  FakeImageCall,
  FakePrompt,
  FakeResponse,
  FakeToolCall,
  FakeToolCallResult,
  FakeUsage,
  Fault,
  FaultKind,
  FaultRequest,
  Finish,
  Flight,
  HoldableEventType,
  InFlight,
  MissReport,
  Mode,
  ModelRequestEvent,
  ModelRequestInfo,
  Purpose,
  ReplyEvent,
  RequestEvent,
  ResponseEvent,
  ScopeFailure,
  ScopeResult,
  SlackCall,
  SlackCalls,
  SlackChannel,
  SlackError,
  SlackMessage,
  SlackSeed,
  SlackSeedMessage,
  SlackSeeded,
  SlackUser,
  Stats,
  StreamEvent,
  ToolRequestEvent,
} from './openapi.js';
// useProxy (H-useproxy) is exported below.
export { useProxy } from './useproxy.js';
export type { ProxyTarget, ProxyUse, UseProxyOptions } from './useproxy.js';
