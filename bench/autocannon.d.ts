/** The part of autocannon 8's programmatic API the benches use (it ships no types). */
declare module 'autocannon' {
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    requests: { average: number };
    latency: { average: number; p99: number };
  }
  function autocannon(options: Options): Promise<Result>;
  export = autocannon;
}
