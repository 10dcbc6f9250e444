if Code.ensure_loaded?(Nx) do
  defmodule Nxvk.GcPressureTest do
    # A tight loop of device ops with no explicit frees makes garbage faster
    # than the BEAM collects it (the terms are tiny, so collection is rare
    # and the old heap keeps dead tensors until a full sweep): the port's
    # memory fills before the process collects.  The backend answers an
    # alloc_failed by collecting the caller and retrying once.
    use ExUnit.Case, async: false
    import Nxvk.TestHelpers
    @moduletag :nx

    # a port of its own, capped at 8 MiB: 8 tensors of 1 MiB
    @device 5
    @cap 8 * 1024 * 1024
    @n 256 * 1024

    setup do
      name = :"Elixir.Nxvk.Server.#{@device}"

      pid =
        start_supervised!(
          {Nxvk.Server, name: name, args: ["--max-bytes", "#{@cap}"], env: [{"NXVK_DEVICE", "0"}]}
        )

      assert Nxvk.Backend.server(@device) == pid
      %{server: pid}
    end

    test "300 Nx.add of 1 MiB tensors with no frees complete under an 8 MiB cap, live bytes bounded",
         %{server: s} do
      assert ok!(Nxvk.Server.stats(s))["max_bytes"] == @cap
      # a process with a large heap (as a training loop that holds its data)
      # collects rarely: 32 MiB of heap take thousands of iterations to fill
      Process.flag(:min_heap_size, 4_000_000)
      :erlang.garbage_collect()
      x = Nx.iota({@n}, type: :f32, backend: {Nxvk.Backend, device: @device})

      last =
        Enum.reduce(1..300, x, fn _, acc ->
          r = Nx.add(acc, 1.0)
          assert %Nxvk.Backend{handle: h} = r.data
          assert is_integer(h), "the result fell back to the host"
          r
        end)

      <<a::float-32-little, b::float-32-little, _::binary>> = Nx.to_binary(last)
      assert {a, b} == {300.0, 301.0}

      assert Nx.to_binary(Nx.slice(last, [@n - 1], [1])) ==
               <<(@n - 1 + 300) * 1.0::float-32-little>>

      stats = ok!(Nxvk.Server.stats(s))
      assert stats["peak_bytes"] <= @cap, inspect(stats)
      # what is left once the garbage is collected: x and last (1 MiB each)
      :erlang.garbage_collect()
      assert {:ok, _} = wait_stats(s, &(&1["live_bytes"] <= 2 * 4 * @n)), inspect(stats)
    end

    test "a genuine out-of-memory still raises a clear error", %{server: s} do
      keep =
        for _ <- 1..8, do: Nx.iota({@n}, type: :f32, backend: {Nxvk.Backend, device: @device})

      assert ok!(Nxvk.Server.stats(s))["live_bytes"] >= @cap - 4 * @n

      # the cap is full of live tensors: collecting frees nothing, the one
      # retry fails too, and the error names alloc_failed
      assert_raise RuntimeError, ~r/alloc_failed/, fn -> Nx.add(hd(keep), 1.0) end
      assert length(keep) == 8
    end
  end
end
