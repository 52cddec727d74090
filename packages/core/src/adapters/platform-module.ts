import { ContainerModule } from 'inversify';
import { RunloomConfig } from '../config';
import { Metrics, MetricsRegistry } from '../domain/ops/metrics';
import { Migrations } from '../domain/storage/migrations';
import { platformMigrations } from '../domain/storage/platform-migrations';
import { Clock } from '../ports/clock';
import { Database } from '../ports/database';
import { EventBus } from '../ports/event-bus';
import { IdGenerator } from '../ports/id-generator';
import { Logger } from '../ports/logger';
import { PasswordHasher } from '../ports/password-hasher';
import { SecretBox } from '../ports/secret-box';
import { MemoryDatabase } from './memory/memory-database';
import { MemoryEventBus } from './memory/memory-event-bus';
import { AesGcmSecretBox } from './node/aes-gcm-secret-box';
import { SilentLogger } from './node/pino-logger';
import { ScryptPasswordHasher } from './node/scrypt-password-hasher';
import { SystemClock } from './node/system-clock';
import { UuidV7Generator } from './node/uuid-v7-generator';

/**
 * Default adapters of every port. A host replaces any of them by passing a module to
 * `createRunloom({ modules })` that rebinds the port.
 */
export const platformModule = new ContainerModule(({ bind }) => {
  bind(Clock).toConstantValue(new SystemClock());
  bind(IdGenerator).toConstantValue(new UuidV7Generator());
  bind(Logger).toConstantValue(new SilentLogger());
  bind(Metrics).toConstantValue(new MetricsRegistry());
  bind(PasswordHasher).toConstantValue(new ScryptPasswordHasher());
  bind(Database).toConstantValue(new MemoryDatabase());
  bind(Migrations).toConstantValue(platformMigrations);
  bind(SecretBox)
    .toResolvedValue((config: RunloomConfig) => AesGcmSecretBox.fromConfig(config), [RunloomConfig])
    .inSingletonScope();
  bind(EventBus)
    .toResolvedValue((logger: Logger) => new MemoryEventBus({ logger }), [Logger])
    .inSingletonScope();
});
