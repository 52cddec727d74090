export * from './clock';
export * from './database';
export * from './event-bus';
export * from './id-generator';
export * from './job-queue';
export * from './logger';
export * from './secret-box';
export * from './password-hasher';
