/**
 * A test's messages over time: one bar per second, its height the number of messages the service
 * received in that second. Drawn as plain SVG (no charting library: a few rectangles do not need
 * one, and the page loads nothing from elsewhere). It is redrawn from the messages the view
 * holds, so each message arriving over the subscription grows its bar at once.
 */
import { arrivalsPerSecond } from './arrivals.js';

const WIDTH = 600;
const HEIGHT = 140;
/** Room for the count labels on the left and the time labels below. */
const PLOT = { left: 28, right: 4, top: 8, bottom: 20 };
/** The widest a second's slot gets (bar and gap). */
const MAX_SLOT = 40;
/** Below this width of bars the two time labels would overlap. */
const MIN_SPAN_FOR_TWO_LABELS = 140;

const timeOf = (second: number) => new Date(second).toLocaleTimeString();
const messagesText = (count: number) => `${count} message${count === 1 ? '' : 's'}`;

/** The chart of arrivals per second, from each message's `receivedAt`; nothing before the first message. */
export function ArrivalsChart(props: { receivedAt: readonly string[] }) {
  const seconds = arrivalsPerSecond(props.receivedAt);
  if (seconds.length === 0) return null;
  const peak = Math.max(...seconds.map((s) => s.count));
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  // A few seconds make narrow bars from the left rather than slabs across the whole width.
  const slot = Math.min(plotWidth / seconds.length, MAX_SLOT);
  const span = seconds.length * slot;
  // A gap between bars while they are wide enough to show one.
  const gap = slot > 6 ? Math.min(4, slot * 0.2) : 0;
  const first = seconds[0] as (typeof seconds)[number];
  const last = seconds[seconds.length - 1] as (typeof seconds)[number];
  // The picture's text alternative: what a screen reader says instead of the bars.
  const summary = `Arrivals per second: ${messagesText(props.receivedAt.length)} over ${seconds.length} second${seconds.length === 1 ? '' : 's'}, at most ${peak} in one second`;
  return (
    <figure className="rcs-chart" data-testid="arrivals-chart">
      <figcaption>Messages per second</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={summary}>
        <line className="rcs-chart-axis" x1={PLOT.left} y1={PLOT.top + plotHeight} x2={WIDTH - PLOT.right} y2={PLOT.top + plotHeight} />
        <line className="rcs-chart-grid" x1={PLOT.left} y1={PLOT.top} x2={WIDTH - PLOT.right} y2={PLOT.top} />
        <text className="rcs-chart-label" x={PLOT.left - 4} y={PLOT.top + 8} textAnchor="end">
          {peak}
        </text>
        <text className="rcs-chart-label" x={PLOT.left - 4} y={PLOT.top + plotHeight} textAnchor="end">
          0
        </text>
        {seconds.map((s, i) => {
          const height = (s.count / peak) * plotHeight;
          return (
            <rect
              key={s.second}
              className="rcs-chart-bar"
              data-testid="arrival-bar"
              data-second={new Date(s.second).toISOString()}
              data-count={s.count}
              x={PLOT.left + i * slot + gap / 2}
              y={PLOT.top + plotHeight - height}
              width={slot - gap}
              height={height}
            >
              <title>{`${timeOf(s.second)}: ${messagesText(s.count)}`}</title>
            </rect>
          );
        })}
        {/* The first and last second under their bars; as one range while the bars are too few to keep two labels apart. */}
        {seconds.length > 1 && span >= MIN_SPAN_FOR_TWO_LABELS ? (
          <>
            <text className="rcs-chart-label" x={PLOT.left} y={HEIGHT - 4} textAnchor="start">
              {timeOf(first.second)}
            </text>
            <text className="rcs-chart-label" x={PLOT.left + span} y={HEIGHT - 4} textAnchor="end">
              {timeOf(last.second)}
            </text>
          </>
        ) : (
          <text className="rcs-chart-label" x={PLOT.left} y={HEIGHT - 4} textAnchor="start">
            {seconds.length > 1 ? `${timeOf(first.second)} – ${timeOf(last.second)}` : timeOf(first.second)}
          </text>
        )}
      </svg>
    </figure>
  );
}
