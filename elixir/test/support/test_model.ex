if Code.ensure_loaded?(Nx) do
  defmodule Nxvk.TestModel do
    @moduledoc false
    # A small defn model served by Nx.Serving in the serving tests (here, on
    # the compiled code path, so peer nodes have it too).
    import Nx.Defn

    defn(predict(x), do: Nx.sum(Nx.tanh(x * 0.5 + 1.0), axes: [1]))

    def serving do
      Nx.Serving.jit(&predict/1, compiler: Nxvk.Compiler)
      # results leave the node as plain binaries (device handles are local)
      |> Nx.Serving.distributed_postprocessing(&Nx.backend_copy(&1, Nx.BinaryBackend))
    end

    # started on a peer by :erpc; not linked to the short-lived erpc process
    def start_serving(name, opts \\ []) do
      {:ok, pid} =
        Nx.Serving.start_link(
          [serving: serving(), name: name, batch_size: 4, batch_timeout: 5] ++ opts
        )

      Process.unlink(pid)
      {:ok, pid}
    end

    def expected(x) do
      x |> Nx.backend_copy(Nx.BinaryBackend) |> predict() |> Nx.to_flat_list()
    end
  end
end
