"""The premise of `step_graph.GRAPH_BREAK_OPS`, checked on the torch installed: Dynamo does not
trace an LSTM and cannot resume after one, so compiling a model of an embedding, an LSTM and
a decoder (the word LM's shape) compiles only what comes before the LSTM; the decoder after
it runs eager. If a torch release starts resuming there, this fails and the what-if's rule
(the rest of the forward pass and its backward stay eager) must follow it."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn


class WordLM(nn.Module):
    """pytorch/examples' word-level LM, reduced: embedding, dropout, LSTM, dropout, decoder."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Embedding(100, 16)
        self.drop = nn.Dropout(0.2)
        self.rnn = nn.LSTM(16, 16, 2, dropout=0.2)
        self.decoder = nn.Linear(16, 100)

    def forward(self, x, hidden):  # noqa: ANN001, ANN201 - the example's own signature
        emb = self.drop(self.encoder(x))
        out, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(self.drop(out)).view(-1, 100)
        return torch.nn.functional.log_softmax(decoded, dim=1), hidden


def test_dynamo_compiles_a_model_only_up_to_its_lstm():
    graphs: list[list[str]] = []

    def backend(gm, example_inputs):  # noqa: ANN001, ANN202, ARG001 - Dynamo's signature
        graphs.append([getattr(n.target, "__name__", str(n.target)) for n in gm.graph.nodes
                       if n.op == "call_function"])
        return gm.forward

    torch._dynamo.reset()
    model = torch.compile(WordLM(), backend=backend)
    x = torch.randint(0, 100, (35, 4))
    hidden = (torch.zeros(2, 4, 16), torch.zeros(2, 4, 16))
    for _ in range(2):
        out, hidden = model(x, hidden)
        out.sum().backward()
        hidden = tuple(h.detach() for h in hidden)  # the example's repackage_hidden
    torch._dynamo.reset()
    assert graphs == [["embedding", "dropout"]]
