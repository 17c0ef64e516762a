/**
 * A message's payload, pretty-printed (JSON indented by two spaces) inside a `<details>`, so each
 * one can be opened and closed on its own. Closed, its summary shows the payload on one line,
 * cut short, so a long list of messages stays scannable; opening it shows the whole document.
 */

/** How much of the one-line form the closed summary shows. */
const PREVIEW_LENGTH = 60;

/** The payload, collapsible; a dash when the message had none. */
export function PayloadView(props: { payload: unknown }) {
  if (props.payload === null || props.payload === undefined) return <span className="rcs-hint">–</span>;
  const line = JSON.stringify(props.payload);
  const preview = line.length > PREVIEW_LENGTH ? `${line.slice(0, PREVIEW_LENGTH - 1)}…` : line;
  return (
    <details className="rcs-payload" data-testid="payload">
      <summary>
        <code>{preview}</code>
      </summary>
      <pre data-testid="payload-json">{JSON.stringify(props.payload, null, 2)}</pre>
    </details>
  );
}
