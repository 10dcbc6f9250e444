# A defn MLP training step (dot, tanh, softmax, grad) under Nxvk.Compiler
# (one port request per step) against Nx.Defn.Evaluator (one request per op)
# on Nxvk.Backend, and the Evaluator on Nx.BinaryBackend.
#
#   cd elixir && mix run bench/mlp.exs [--batch 64] [--hidden 128] [--steps 20]

{opts, _, _} = OptionParser.parse(System.argv(), strict: [batch: :integer, hidden: :integer, steps: :integer])
batch = opts[:batch] || 64
hidden = opts[:hidden] || 128
steps = opts[:steps] || 20
inputs = 64
classes = 10

defmodule MLP do
  import Nx.Defn

  defn predict({w1, b1, w2, b2}, x) do
    h = Nx.tanh(Nx.dot(x, w1) + b1)
    logits = Nx.dot(h, w2) + b2
    # softmax, written out
    e = Nx.exp(logits - Nx.reduce_max(logits, axes: [1], keep_axes: true))
    e / Nx.sum(e, axes: [1], keep_axes: true)
  end

  defn loss(params, x, y) do
    p = predict(params, x)
    -Nx.sum(y * Nx.log(p + 1.0e-7)) / Nx.axis_size(x, 0)
  end

  defn step({w1, b1, w2, b2} = params, x, y) do
    {l, {g1, gb1, g2, gb2}} = value_and_grad(params, &loss(&1, x, y))
    lr = 0.1
    {{w1 - lr * g1, b1 - lr * gb1, w2 - lr * g2, b2 - lr * gb2}, l}
  end
end

key = Nx.Random.key(7)
{w1, key} = Nx.Random.normal(key, 0.0, 0.1, shape: {inputs, hidden}, type: :f32)
{w2, key} = Nx.Random.normal(key, 0.0, 0.1, shape: {hidden, classes}, type: :f32)
{x, key} = Nx.Random.uniform(key, shape: {batch, inputs}, type: :f32)
{labels, _} = Nx.Random.randint(key, 0, classes, shape: {batch}, type: :s32)
y = Nx.equal(Nx.new_axis(labels, 1), Nx.iota({1, classes}, type: :s32)) |> Nx.as_type(:f32)
b1 = Nx.broadcast(0.0, {hidden})
b2 = Nx.broadcast(0.0, {classes})
params = {w1, b1, w2, b2}

on = fn t, backend -> Nx.backend_copy(t, backend) end
host = {params |> Tuple.to_list() |> Enum.map(&on.(&1, Nx.BinaryBackend)) |> List.to_tuple(), on.(x, Nx.BinaryBackend), on.(y, Nx.BinaryBackend)}
dev = {params |> Tuple.to_list() |> Enum.map(&on.(&1, Nxvk.Backend)) |> List.to_tuple(), on.(x, Nxvk.Backend), on.(y, Nxvk.Backend)}

run = fn {p, x, y}, compiler, backend ->
  Nx.default_backend(backend)
  step = Nx.Defn.jit(&MLP.step/3, compiler: compiler)
  {p1, l0} = step.(p, x, y)
  server = Nxvk.Backend.server(0)
  {:ok, s0} = Nxvk.Server.stats(server)

  {t, {_p, l}} =
    :timer.tc(fn ->
      Enum.reduce(1..steps, {p1, l0}, fn _, {p, _} -> step.(p, x, y) end)
    end)

  {:ok, s1} = Nxvk.Server.stats(server)
  {t / steps, Nx.to_number(l0), Nx.to_number(l), div(s1["requests"] - s0["requests"] - 1, steps)}
end

{:ok, info} = Nxvk.Server.info()
IO.puts("device: #{info["device"]["name"]}, #{DateTime.utc_now() |> DateTime.truncate(:second)}")
IO.puts("command: mix run bench/mlp.exs #{Enum.join(System.argv(), " ")}")
IO.puts("MLP #{inputs} -> #{hidden} (tanh) -> #{classes} (softmax), batch #{batch}, cross-entropy, value_and_grad, SGD; mean of #{steps} steps after one warm-up\n")
IO.puts("| compiler | backend | ms per step | port requests per step | loss (first -> last) |")
IO.puts("| --- | --- | --- | --- | --- |")

for {name, compiler, backend, data} <- [
      {"Nxvk.Compiler", Nxvk.Compiler, Nxvk.Backend, dev},
      {"Nx.Defn.Evaluator", Nx.Defn.Evaluator, Nxvk.Backend, dev},
      {"Nx.Defn.Evaluator", Nx.Defn.Evaluator, Nx.BinaryBackend, host}
    ] do
  {us, l0, l, reqs} = run.(data, compiler, backend)
  IO.puts("| #{name} | #{inspect(backend)} | #{:io_lib.format("~.2f", [us / 1000])} | #{reqs} | #{:io_lib.format("~.4f -> ~.4f", [l0, l])} |")
end

IO.puts("\nNxvk.Compiler: #{inspect(Nxvk.Compiler.stats())}")
