/** Node flags for `atrium serve` (see serve-flags.js). */
export declare const SERVE_NODE_FLAGS: readonly string[];
