/**
 * The widget's "Try the top fixes" (`tryBar`, `tryControl`): the button starts the kernel's
 * tries, becomes Cancel while they run, and the progress line follows the model's state; a
 * report without a kernel behind it has no button.
 */
import { ITryControl } from '../report/env';
import { nextPanel, tryBar } from '../report/next';
import { IWidgetModel, tryControl } from '../report/widget';
import { realSummary } from './reportFixture';
import { makeBasis } from '../report/basis';

/** A widget model as anywidget hands it, with its sync'd try state and sent messages. */
function fakeModel(offer: string): {
  model: IWidgetModel;
  sent: string[];
  set: (k: string, v: unknown) => void;
} {
  const state: Record<string, unknown> = { try_offer: offer, try_status: '', try_running: false };
  const handlers: Record<string, (() => void)[]> = {};
  const sent: string[] = [];
  const model = {
    get: (name: string) => state[name],
    on: (event: string, cb: () => void) => {
      (handlers[event] ??= []).push(cb);
    },
    send: (content: { action: string }) => sent.push(content.action)
  } as unknown as IWidgetModel;
  const set = (k: string, v: unknown) => {
    state[k] = v;
    (handlers[`change:${k}`] ?? []).forEach(cb => cb());
  };
  return { model, sent, set };
}

describe('tryBar', () => {
  it('starts the tries, then cancels them, with the progress line beside', () => {
    const { model, sent, set } = fakeModel('Try the top fixes (compile)');
    const bar = tryBar(tryControl(model) as ITryControl);
    const button = bar.querySelector('button') as HTMLButtonElement;
    expect(button.textContent).toBe('Try the top fixes (compile)');
    button.click();
    expect(sent).toEqual(['try']);
    set('try_running', true);
    set('try_status', 'trying compile: round 1/2: none');
    expect(button.textContent).toBe('Cancel');
    expect(bar.querySelector('[role=status]')?.textContent).toBe('trying compile: round 1/2: none');
    button.click();
    expect(sent).toEqual(['try', 'cancel']);
    set('try_running', false);
    expect(button.textContent).toBe('Try the top fixes (compile)');
  });

  it('is absent where no kernel offers tries', () => {
    const { model } = fakeModel('');
    expect(tryControl(model)).toBeUndefined();
    const sm = realSummary();
    const panel = nextPanel(sm, makeBasis(sm, 'step'));
    expect(panel.querySelector('.gpuprof-w-trybar')).toBeNull();
  });
});
