/**
 * What the fake vendor the runner serves answers, in order; the suite (inside VS Code) and the
 * runner (test/vscode-extension.test.ts) both read it from here.
 */
export const FIRST_REPLY_CHUNKS = ['Hello', ' from', ' the fake vendor'];
export const FIRST_REPLY = FIRST_REPLY_CHUNKS.join('');
/** Streamed up to its middle, then held until the run ends: the suite stops this reply. */
export const PARTIAL_REPLY_CHUNKS = ['Partial', ' reply', ' that never', ' ends'];
export const PARTIAL_REPLY = 'Partial reply';
/** The answer to the fixture's `greet` command (a prompt command), third in line. */
export const COMMAND_REPLY_CHUNKS = ['Hello', ', Ada'];
export const COMMAND_REPLY = COMMAND_REPLY_CHUNKS.join('');
/** The reply a thread of the remote `runloom serve` gets, fourth in line. */
export const REMOTE_REPLY_CHUNKS = ['Hello', ' from the remote server'];
export const REMOTE_REPLY = REMOTE_REPLY_CHUNKS.join('');
/** The remote server's workspace and thread, made by the runner. */
export const REMOTE_WORKSPACE = 'Remote project';
export const REMOTE_THREAD = 'Remote thread';
