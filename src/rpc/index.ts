/** The network transport for the core: a client that is a Core, a server that exposes one. */
export { connectCore, type RpcClientOptions, type RpcCore } from './client.js';
export { RpcServer, type RpcFaults, type RpcServerOptions } from './server.js';
export { RpcError, isRpcError, type RpcErrorCode } from './errors.js';
export { parseRpcAddress, formatRpcAddress, type RpcAddress } from './address.js';
export { RPC_VERSION } from './handshake.js';
