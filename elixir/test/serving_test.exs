if Code.ensure_loaded?(Nx) do
  defmodule Nxvk.ServingTest do
    # Past one device and one node with Nx.Serving: one port per device
    # (device: N), a serving batching across every device (partitions: true),
    # and batched_run({:distributed, name}, ...) across BEAM nodes (:peer).
    # On lavapipe both "devices" are the one CPU device (device_map), each
    # with its own port process.
    use ExUnit.Case, async: false
    import Nxvk.TestHelpers
    @moduletag :nx

    setup do
      Application.put_env(:nxvk, :devices, [0, 1])
      Application.put_env(:nxvk, :device_map, %{1 => 0})

      on_exit(fn ->
        Application.delete_env(:nxvk, :devices)
        Application.delete_env(:nxvk, :device_map)
      end)
    end

    defp requests(server), do: ok!(Nxvk.Server.stats(server))["requests"]

    test "device: N is its own port" do
      t0 = Nx.tensor([1.0, 2.0], backend: {Nxvk.Backend, device: 0})
      t1 = Nx.tensor([3.0, 4.0], backend: {Nxvk.Backend, device: 1})
      assert t0.data.server == Nxvk.Backend.server(0)
      assert t1.data.server == Nxvk.Backend.server(1)
      assert t0.data.server != t1.data.server
      assert Nxvk.Server.os_pid(t0.data.server) != Nxvk.Server.os_pid(t1.data.server)
      # mixed devices: the second operand is copied to the first's
      assert Nx.to_flat_list(Nx.add(t0, t1)) == [4.0, 6.0]
      assert Nx.to_flat_list(Nx.backend_transfer(t0, {Nxvk.Backend, device: 1})) == [1.0, 2.0]
    end

    test "a serving with partitions: true batches across every device" do
      s0 = Nxvk.Backend.server(0)
      s1 = Nxvk.Backend.server(1)
      {r0, r1} = {requests(s0), requests(s1)}

      start_supervised!(
        {Nx.Serving,
         serving: Nxvk.TestModel.serving(),
         name: Nxvk.PartServing,
         batch_size: 4,
         batch_timeout: 20,
         partitions: true}
      )

      inputs = for i <- 1..64, do: Nx.tensor([[i / 10, -i / 20, 1.0]], backend: Nx.BinaryBackend)

      results =
        inputs
        |> Task.async_stream(
          &Nx.Serving.batched_run(Nxvk.PartServing, Nx.Batch.concatenate([&1])),
          max_concurrency: 64,
          ordered: true
        )
        |> Enum.map(fn {:ok, r} -> r end)

      for {x, r} <- Enum.zip(inputs, results),
          do: assert_close(Nx.to_flat_list(r), Nxvk.TestModel.expected(x), 1.0e-6)

      # both ports served batches (each batch is one run request)
      assert requests(s0) - r0 > 2
      assert requests(s1) - r1 > 2
    end

    @tag :distributed
    test "batched_run({:distributed, name}) across two peer nodes" do
      started_here = start_distribution()

      peers =
        for n <- 1..2 do
          {:ok, peer, node} =
            :peer.start(%{
              name: :"nxvk_peer#{n}_#{System.unique_integer([:positive])}",
              host: ~c"127.0.0.1",
              longnames: true
            })

          true = :erpc.call(node, :code, :set_path, [:code.get_path()])
          {:ok, _} = :erpc.call(node, :application, :ensure_all_started, [:nxvk])
          {:ok, _} = :erpc.call(node, Nxvk.TestModel, :start_serving, [Nxvk.DistServing])
          {peer, node}
        end

      try do
        inputs = for i <- 1..24, do: Nx.tensor([[i / 7, 2.0, -i / 3]], backend: Nx.BinaryBackend)

        results =
          inputs
          |> Task.async_stream(
            &Nx.Serving.batched_run({:distributed, Nxvk.DistServing}, Nx.Batch.concatenate([&1])),
            max_concurrency: 24,
            ordered: true,
            timeout: 60_000
          )
          |> Enum.map(fn {:ok, r} -> r end)

        for {x, r} <- Enum.zip(inputs, results),
            do: assert_close(Nx.to_flat_list(r), Nxvk.TestModel.expected(x), 1.0e-6)

        # the model ran on the peers' own ports
        for {_peer, node} <- peers do
          {:ok, stats} = :erpc.call(node, Nxvk.Server, :stats, [])
          assert stats["requests"] > 1, "#{node} served nothing"
        end
      after
        for {peer, _} <- peers, do: :peer.stop(peer)
        if started_here, do: Node.stop()
      end
    end

    defp start_distribution do
      if Node.alive?() do
        false
      else
        {_, 0} = System.cmd("epmd", ["-daemon"])

        {:ok, _} =
          Node.start(:"nxvk_primary_#{System.unique_integer([:positive])}@127.0.0.1", :longnames)

        true
      end
    end
  end
end
