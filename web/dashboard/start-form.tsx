/** Starts a test with a name and JSON parameters, then opens it. */
import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { StartTest } from './operations.js';

/** Reads the parameters field: empty means none; anything else must be a JSON object. */
function parseParameters(text: string): { value: unknown } | { problem: string } {
  if (text.trim() === '') return { value: null };
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problem: 'Parameters must be a JSON object, e.g. { "steps": 5 }.' };
    return { value };
  } catch (error) {
    return { problem: `Parameters are not valid JSON: ${(error as Error).message}` };
  }
}

export function StartForm(props: { onStarted: (correlationId: string) => void }) {
  const [name, setName] = useState('');
  const [parameters, setParameters] = useState('{ "steps": 5 }');
  const [problem, setProblem] = useState<string | null>(null);
  const [state, startTest] = useMutation(StartTest);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseParameters(parameters);
    if ('problem' in parsed) {
      setProblem(parsed.problem);
      return;
    }
    setProblem(null);
    const result = await startTest({ input: { name: name.trim() || null, parameters: parsed.value } });
    if (result.error) setProblem(result.error.message);
    else if (result.data) props.onStarted(result.data.startTest.correlationId);
  };

  return (
    <form className="rcs-start" onSubmit={(event) => void submit(event)}>
      <h2>Start a test</h2>
      <label>
        Name
        <input name="name" value={name} placeholder="e.g. nightly smoke run" onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Parameters (JSON)
        <textarea name="parameters" rows={3} value={parameters} onChange={(e) => setParameters(e.target.value)} />
      </label>
      <button type="submit" disabled={state.fetching}>
        {state.fetching ? 'Starting…' : 'Start'}
      </button>
      {problem ? (
        <p role="alert" className="rcs-problem">
          {problem}
        </p>
      ) : null}
    </form>
  );
}
