import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { observe, RequestMetrics } from '../../src/platform/metrics-http.ts';

test('the request histogram is written cumulative, with +Inf, sum and count; one series per label set', async () => {
  const registry = new Registry();
  const requests = new RequestMetrics();
  requests.register(registry);
  const labels = { listener: 'api', method: 'GET', route: '/rest/x', status: '200' };
  const series = requests.series(labels);
  assert.equal(requests.series({ ...labels }), series, 'the same labels give the same series');
  for (const seconds of [0.003, 0.005, 0.02, 20]) {
    series.requests += 1;
    observe(series.duration, seconds);
  }
  const text = await registry.metrics();
  const at = (le: string) =>
    Number(
      new RegExp(
        `_bucket\\{listener="api",method="GET",route="/rest/x",status="200",le="${le.replace('+', '\\+')}"\\} (\\S+)`,
      ).exec(text)?.[1],
    );
  assert.deepEqual(['0.005', '0.01', '0.025', '10', '+Inf'].map(at), [2, 2, 3, 3, 4]);
  assert.match(text, /^ewa_http_request_duration_seconds_sum\{[^}]*\} 20\.028$/m);
  assert.match(text, /^ewa_http_request_duration_seconds_count\{[^}]*\} 4$/m);
  assert.match(
    text,
    /^ewa_http_requests_total\{listener="api",method="GET",route="\/rest\/x",status="200"\} 4$/m,
  );
  assert.match(text, /^# TYPE ewa_http_request_duration_seconds histogram$/m);
  assert.match(text, /^# TYPE ewa_http_requests_total counter$/m);
});
