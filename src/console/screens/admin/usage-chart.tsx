/** One bar per UTC day; `value` is what the chart measures. */
export interface DayBar {
  day: string;
  value: number;
}

const WIDTH = 800;
const HEIGHT = 260;
const PAD = { left: 64, right: 12, top: 12, bottom: 36 };

/**
 * An inline SVG bar chart (no chart library): bars in the console's accent colour, a y-axis of
 * four round steps, and a few day labels. It is an image to assistive technology, named and
 * summarized; the table beside it carries the same figures.
 */
export function UsageChart({ bars, measure, format, titleId }: { bars: DayBar[]; measure: string; format: (n: number) => string; titleId: string }) {
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const top = niceCeiling(Math.max(0, ...bars.map((bar) => bar.value)));
  const slot = plotWidth / Math.max(1, bars.length);
  const barWidth = Math.max(1, slot * 0.72);
  const y = (value: number) => PAD.top + plotHeight - (top ? (value / top) * plotHeight : 0);
  const labelEvery = Math.max(1, Math.ceil(bars.length / 10));
  const total = bars.reduce((sum, bar) => sum + bar.value, 0);
  const busiest = bars.reduce<DayBar | undefined>((best, bar) => (!best || bar.value > best.value ? bar : best), undefined);
  return (
    <svg class="usage-chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${titleId} ${titleId}-desc`}>
      <desc id={`${titleId}-desc`}>
        {bars.length} days; {format(total)} {measure} in all
        {busiest && busiest.value > 0 ? `; the most on ${busiest.day} (${format(busiest.value)})` : ''}. The table below lists each day.
      </desc>
      {[0, 1, 2, 3, 4].map((step) => {
        const value = (top * step) / 4;
        return (
          <g key={step}>
            <line class="axis" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(value)} y2={y(value)} />
            <text x={PAD.left - 6} y={y(value) + 4} text-anchor="end">
              {format(value)}
            </text>
          </g>
        );
      })}
      {bars.map((bar, index) => {
        const x = PAD.left + index * slot + (slot - barWidth) / 2;
        return (
          <g key={bar.day}>
            <rect class="bar" data-day={bar.day} data-value={bar.value} x={x} y={y(bar.value)} width={barWidth} height={Math.max(0, PAD.top + plotHeight - y(bar.value))}>
              <title>
                {bar.day}: {format(bar.value)} {measure}
              </title>
            </rect>
            {index % labelEvery === 0 && (
              <text x={x + barWidth / 2} y={HEIGHT - PAD.bottom + 16} text-anchor="middle">
                {bar.day.slice(5)}
              </text>
            )}
          </g>
        );
      })}
    </svg>
  );
}

/** The smallest 1, 2 or 5 × 10^n at or above `value` (so the axis reads in round steps). */
function niceCeiling(value: number): number {
  if (value <= 0) return 0;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}
