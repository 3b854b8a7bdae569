import type { Metric, Registry } from 'prom-client';

/** From 5 ms to 10 s: an advance is a few milliseconds, a payroll upload or a slow database several seconds. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

export interface RequestLabels {
  listener: string;
  method: string;
  route: string;
  status: string;
}

/** One series: the requests of one listener, method, route and status, and their latencies. */
export interface RequestSeries {
  readonly labels: RequestLabels;
  requests: number;
  readonly duration: { count: number; sum: number; buckets: Float64Array };
}

/** A histogram observation: the first bucket the value fits in (they are made cumulative when scraped). */
export function observe(duration: RequestSeries['duration'], seconds: number): void {
  duration.count += 1;
  duration.sum += seconds;
  for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
    if (seconds <= LATENCY_BUCKETS[i]!) {
      duration.buckets[i]! += 1;
      return;
    }
  }
}

/**
 * The request counter and latency histogram, kept as plain numbers per series and written out by prom-client's
 * registry when scraped. prom-client's own Counter and Histogram hash their label set into a string on every
 * increment, even through a child: here a request costs two additions and a short bucket scan.
 */
export class RequestMetrics {
  readonly #series: RequestSeries[] = [];
  readonly #byLabels = new Map<string, RequestSeries>();

  /**
   * The series of these labels, made on first use. Two route contexts can carry the same labels (not-found
   * handlers of several plugins are all `(unmatched)`): they share one series, as Prometheus wants one per label set.
   */
  series(labels: RequestLabels): RequestSeries {
    const key = `${labels.listener} ${labels.method} ${labels.route} ${labels.status}`;
    const known = this.#byLabels.get(key);
    if (known) return known;
    const series: RequestSeries = {
      labels,
      requests: 0,
      duration: { count: 0, sum: 0, buckets: new Float64Array(LATENCY_BUCKETS.length) },
    };
    this.#series.push(series);
    this.#byLabels.set(key, series);
    return series;
  }

  register(registry: Registry): void {
    const all = this.#series;
    const counter = {
      name: 'ewa_http_requests_total',
      help: 'Requests answered, by listener, method, route pattern and status code.',
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({
        ...counter,
        values: all.map((series) => ({ labels: { ...series.labels }, value: series.requests })),
      }),
    };
    const histogram = {
      name: 'ewa_http_request_duration_seconds',
      help: 'Time from the request arriving to its response sent, by listener, method, route pattern and status code.',
      type: 'histogram',
      aggregator: 'sum',
      get: async () => ({
        ...histogram,
        values: all.flatMap((series) => {
          const { labels, duration } = series;
          let cumulative = 0;
          const buckets = LATENCY_BUCKETS.map((le, i) => {
            cumulative += duration.buckets[i]!;
            return { metricName: `${histogram.name}_bucket`, labels: { ...labels, le }, value: cumulative };
          });
          return [
            ...buckets,
            {
              metricName: `${histogram.name}_bucket`,
              labels: { ...labels, le: '+Inf' },
              value: duration.count,
            },
            { metricName: `${histogram.name}_sum`, labels: { ...labels }, value: duration.sum },
            { metricName: `${histogram.name}_count`, labels: { ...labels }, value: duration.count },
          ];
        }),
      }),
    };
    // The registry reads any object with a name, help, type and get(); its types name only its own classes.
    registry.registerMetric(counter as unknown as Metric);
    registry.registerMetric(histogram as unknown as Metric);
  }
}
