import assert from 'node:assert/strict';
import { ContainerModule } from 'inversify';
import { HttpClient, RunloomConfig, type CreateRunloomOptions } from '../packages/core/src/index';
import { GuardedHttpClient, type ResolvedAddress } from '../packages/core/src/node';
import { PROVIDER_NAMES } from '../packages/core/src/ports/provider-names';
import { startFakeVendors, type FakeVendorServer } from '../packages/core/src/testing/fake-vendors';
import { CallbackSink } from './support/callback-sink';
import { startTestRunloom, type TestRunloom } from './support/harness';
import { createRunnable, jsonInit, promptConfig, submit, type Json } from './support/runs';

/**
 * Model vendors obey the egress policy every outbound request obeys: a base_url the policy refuses
 * is a 400 when configured and a failed run when it becomes refused later, and the vendor behind it
 * never receives a request.
 */
describe('egress policy for model vendors (HTTP)', function () {
  this.timeout(30_000);
  let fakes: Map<string, FakeVendorServer>;
  let t: TestRunloom | undefined;

  before(async () => {
    fakes = await startFakeVendors();
  });
  after(async () => {
    await Promise.all([...fakes.values()].map((fake) => fake.close()));
  });
  beforeEach(() => {
    for (const fake of fakes.values()) fake.reset();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const portOf = (fake: FakeVendorServer): string => new URL(fake.baseUrl).port;
  const received = (): Record<string, number> => Object.fromEntries([...fakes].map(([provider, fake]) => [provider, fake.requests.length]));
  const nothingReceived = Object.fromEntries(PROVIDER_NAMES.map((provider) => [provider, 0]));

  async function putProvider(app: TestRunloom, provider: string, credentials: Json, account?: string): Promise<Response> {
    return app.request(`/v1/llm-provider/${provider}`, jsonInit('PUT', { enabled: true, credentials }, account));
  }

  /** Runs `fake`'s prompt runnable synchronously and answers the finished run. */
  async function runOnce(app: TestRunloom, runnableId: string, account?: string): Promise<Json> {
    const response = await submit(app, runnableId, {}, { mode: 'sync', account });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Json;
  }

  it('PUT of each of the seven vendors with a loopback base_url → 400 naming --egress-allow and --allow-private-network', async () => {
    t = await startTestRunloom();
    for (const provider of PROVIDER_NAMES) {
      const fake = fakes.get(provider)!;
      const response = await putProvider(t, provider, fake.credentials);
      assert.equal(response.status, 400, provider);
      const body = (await response.json()) as { error: string; details: { path: string; message: string }[] };
      assert.match(
        body.error,
        new RegExp(`^invalid ${provider} credentials: credentials\\.base_url: refused: 127\\.0\\.0\\.1 is a loopback address.*--egress-allow 127\\.0\\.0\\.1:${portOf(fake)} .*--allow-private-network`),
      );
      assert.equal(body.details[0]?.path, 'credentials.base_url');
    }
    const listed = (await (await t.request('/v1/llm-providers')).json()) as { data: unknown[] };
    assert.deepEqual(listed.data, [], 'nothing was stored');
    assert.deepEqual(received(), nothingReceived);
  });

  it('refuses every spelling of a non-public base_url, and accepts a public one', async () => {
    t = await startTestRunloom();
    const spellings: [string, RegExp][] = [
      ['127.0.0.1', /loopback/],
      ['2130706433', /127\.0\.0\.1 is a loopback/],
      ['0x7f000001', /127\.0\.0\.1 is a loopback/],
      ['0x7f.1', /127\.0\.0\.1 is a loopback/],
      ['127.1', /127\.0\.0\.1 is a loopback/],
      ['0177.0.0.1', /127\.0\.0\.1 is a loopback/],
      ['127.0.0.1.', /loopback/],
      ['localhost', /localhost resolves to .* a loopback/],
      ['0.0.0.0', /unspecified/],
      ['0', /unspecified/],
      ['[::]', /unspecified/],
      ['[::1]', /loopback/],
      ['[::ffff:127.0.0.1]', /loopback/],
      ['[::ffff:7f00:1]', /loopback/],
      ['[0:0:0:0:0:ffff:127.0.0.1]', /loopback/],
      ['10.0.0.1', /private/],
      ['0xa000001', /10\.0\.0\.1 is a private/],
      ['172.16.0.1', /private/],
      ['192.168.1.1', /private/],
      ['[::ffff:192.168.1.1]', /private/],
      ['100.64.0.1', /carrier-grade NAT/],
      ['169.254.169.254', /cloud metadata/],
      ['[::ffff:169.254.169.254]', /cloud metadata/],
      ['[fd00:ec2::254]', /cloud metadata/],
      ['169.254.1.1', /link-local/],
      ['[fe80::1]', /link-local/],
      ['[fc00::1]', /unique-local/],
      ['224.0.0.1', /multicast/],
      ['[ff02::1]', /multicast/],
    ];
    for (const [host, what] of spellings) {
      const response = await putProvider(t, 'openai', { api_key: 'sk-test-1234', base_url: `http://${host}:${portOf(fakes.get('openai')!)}/v1` });
      assert.equal(response.status, 400, host);
      const { error } = (await response.json()) as { error: string };
      assert.match(error, /credentials\.base_url: refused: /, host);
      assert.match(error, what, host);
    }
    assert.equal((await putProvider(t, 'openai', { api_key: 'sk-test-1234', base_url: 'https://93.184.215.14/v1' })).status, 201);
    assert.deepEqual(received(), nothingReceived);
  });

  it('fails the runs of providers stored while allowed once the server restarts without --allow-private-network; the vendors receive nothing', async () => {
    // The harness restarts with this same object: turning the flag off here is the restart without it.
    const options: CreateRunloomOptions = { allowPrivateNetwork: true };
    t = await startTestRunloom(options);
    const runnables = new Map<string, string>();
    for (const provider of PROVIDER_NAMES) {
      const fake = fakes.get(provider)!;
      assert.equal((await putProvider(t, provider, fake.credentials)).status, 201, provider);
      runnables.set(provider, (await createRunnable(t, promptConfig(fake))).id as string);
    }
    // A second account whose openai base_url is a loopback port where nothing listens.
    const closed = fakes.get('openai')!.credentials;
    const closedUrl = 'http://127.0.0.1:9/v1';
    assert.equal((await putProvider(t, 'openai', { ...closed, base_url: closedUrl }, 'acct-b')).status, 201);
    const closedRunnable = (await createRunnable(t, promptConfig(fakes.get('openai')!), 'acct-b')).id as string;

    options.allowPrivateNetwork = false;
    await t.restart();

    const messages = new Map<string, string>();
    for (const provider of PROVIDER_NAMES) {
      const run = await runOnce(t, runnables.get(provider)!);
      assert.equal(run.status, 'failed', provider);
      assert.equal(run.error.code, 'egress_refused', provider);
      assert.match(
        run.error.message,
        new RegExp(`^${provider} call was not sent: 127\\.0\\.0\\.1 is a loopback address.*--egress-allow 127\\.0\\.0\\.1:${portOf(fakes.get(provider)!)} .*--allow-private-network`),
      );
      messages.set(provider, run.error.message);
    }
    assert.deepEqual(received(), nothingReceived);

    // Open port or closed, the run says the same: runs cannot map which ports answer.
    const closedRun = await runOnce(t, closedRunnable, 'acct-b');
    assert.equal(closedRun.status, 'failed');
    assert.equal(closedRun.error.message.replace(':9 ', ':PORT '), messages.get('openai')!.replace(`:${portOf(fakes.get('openai')!)} `, ':PORT '));
  });

  it('fails a run whose vendor name resolves to loopback at call time (DNS changed), sending nothing', async () => {
    const answers: ResolvedAddress[][] = [[{ address: '93.184.215.14', family: 4 }], [{ address: '127.0.0.1', family: 4 }]];
    let asked = 0;
    const changingDns = new ContainerModule(({ rebind }) => {
      rebind(HttpClient)
        .toResolvedValue(
          (config: RunloomConfig) =>
            new GuardedHttpClient({
              egress: { allowPrivateNetwork: config.allowPrivateNetwork, allow: config.egressAllow },
              resolve: async () => answers[Math.min(asked++, answers.length - 1)]!,
            }),
          [RunloomConfig],
        )
        .inSingletonScope();
    });
    t = await startTestRunloom({ modules: [changingDns] });
    const openai = fakes.get('openai')!;
    const baseUrl = `http://vendor.test:${portOf(openai)}/v1`;
    assert.equal((await putProvider(t, 'openai', { ...openai.credentials, base_url: baseUrl })).status, 201);
    const run = await runOnce(t, (await createRunnable(t, promptConfig(openai))).id as string);
    assert.equal(run.status, 'failed');
    assert.equal(run.error.code, 'egress_refused');
    assert.match(run.error.message, new RegExp(`^openai call was not sent: vendor\\.test resolves to 127\\.0\\.0\\.1, a loopback address.*--egress-allow vendor\\.test:${portOf(openai)} `));
    assert.equal(openai.requests.length, 0);
  });

  it('--egress-allow 127.0.0.1:PORT lets exactly that destination in', async () => {
    const openai = fakes.get('openai')!;
    t = await startTestRunloom({ egressAllow: [`127.0.0.1:${portOf(openai)}`] });
    assert.equal((await putProvider(t, 'openai', openai.credentials)).status, 201);
    const run = await runOnce(t, (await createRunnable(t, promptConfig(openai))).id as string);
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    assert.equal(openai.requests.length, 1);

    for (const provider of PROVIDER_NAMES.filter((name) => name !== 'openai')) {
      assert.equal((await putProvider(t, provider, fakes.get(provider)!.credentials)).status, 400, `${provider} is on another port`);
    }
    const otherPort = await putProvider(t, 'openai', { ...openai.credentials, base_url: 'http://127.0.0.1:9/v1' }, 'acct-b');
    assert.equal(otherPort.status, 400);
    assert.deepEqual(received(), { ...nothingReceived, openai: 1 });
  });

  it('callbacks obey the same allow entries as vendors', async () => {
    const openai = fakes.get('openai')!;
    const sink = await CallbackSink.start();
    try {
      const sinkHost = new URL(sink.url).host;
      t = await startTestRunloom({ egressAllow: [new URL(openai.baseUrl).host] });
      assert.equal((await putProvider(t, 'openai', openai.credentials)).status, 201);
      const runnable = (await createRunnable(t, promptConfig(openai))).id as string;
      const refused = await submit(t, runnable, { callback_url: sink.url });
      assert.equal(refused.status, 400);
      assert.match(((await refused.json()) as { error: string }).error, new RegExp(`callback_url is refused: .*--egress-allow ${sinkHost.replace(/\./g, '\\.')} `));
      await t.close();

      t = await startTestRunloom({ egressAllow: [new URL(openai.baseUrl).host, sinkHost] });
      assert.equal((await putProvider(t, 'openai', openai.credentials)).status, 201);
      const accepted = await submit(t, (await createRunnable(t, promptConfig(openai))).id as string, { callback_url: sink.url });
      assert.equal(accepted.status, 202, await accepted.clone().text());
      const [callback] = await sink.waitFor(1);
      assert.match(callback!.body, /"run\.completed"/);
    } finally {
      await sink.close();
    }
  });

  it('refuses to start with an egressAllow entry that is not host[:port]', async () => {
    await assert.rejects(startTestRunloom({ egressAllow: ['https://llm.lan/v1'] }), /egress allow entry #1 is invalid: 'https:\/\/llm\.lan\/v1' is not host\[:port\]/);
  });
});
