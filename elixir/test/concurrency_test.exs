defmodule Nxvk.ConcurrencyTest do
  # Many processes on one server: answers go to the right caller, and device
  # memory follows the lifetime of the processes that own it.  Each test has
  # its own server, so its counters see only its own tensors.
  use ExUnit.Case, async: false
  import Nxvk.TestHelpers

  setup do
    server = start_supervised!({Nxvk.Server, []})
    %{server: server}
  end

  test "100 concurrent processes doing ops all get their own correct results", %{server: srv} do
    tasks =
      for p <- 1..100 do
        Task.async(fn ->
          # inputs exactly representable in f32, different for every process
          a = for i <- 1..257, do: f32((p * 1000 + i) / 64)
          b = for i <- 1..257, do: f32(i / 8 - p)
          ta = ok!(Nxvk.from_list(a, server: srv))
          tb = ok!(Nxvk.from_list(b, server: srv))
          sum = ok!(Nxvk.add(ta, tb))
          prod = ok!(Nxvk.multiply(sum, tb))
          total = ok!(Nxvk.sum(prod))
          e = ok!(Nxvk.exp(ok!(Nxvk.divide(ta, 1.0e4))))

          want_sum = Enum.zip_with(a, b, &f32(&1 + &2))
          want_prod = Enum.zip_with(want_sum, b, &f32(&1 * &2))
          # add and multiply are exact in f32: equal, not close
          assert ok!(Nxvk.to_list(sum)) == want_sum
          assert ok!(Nxvk.to_list(prod)) == want_prod
          assert_close(ok!(Nxvk.to_list(total)), Enum.sum(want_prod), 1.0e-5, 1.0e-3)
          assert_close(ok!(Nxvk.to_list(e)), Enum.map(a, &:math.exp(&1 / 1.0e4)), 1.0e-5)
          p
        end)
      end

    assert Enum.sort(Task.await_many(tasks, 120_000)) == Enum.to_list(1..100)
    # every task has exited: its tensors are freed
    assert {:ok, %{"handles" => 0, "live_tensors" => 0}} =
             wait_stats(srv, &(&1["handles"] == 0 and &1["live_tensors"] == 0))
  end

  @tensor_bytes 10 * 1024 * 1024
  @wave 50

  test "200 processes killed while holding 10 MiB tensors: live bytes back to zero", %{
    server: srv
  } do
    # four waves of 50 keep the peak at 500 MiB of (host) memory on lavapipe
    for wave <- 1..div(200, @wave) do
      parent = self()

      pids =
        for _ <- 1..@wave do
          spawn(fn ->
            {:ok, t} = Nxvk.iota({div(@tensor_bytes, 4)}, type: :f32, server: srv)
            send(parent, {:holding, self(), t})
            Process.sleep(:infinity)
          end)
        end

      held =
        for pid <- pids do
          receive do
            {:holding, ^pid, t} -> t
          after
            60_000 -> flunk("wave #{wave}: a process did not get its tensor")
          end
        end

      assert Enum.all?(held, &(&1.shape == {div(@tensor_bytes, 4)}))
      stats = ok!(Nxvk.Server.stats(srv))
      assert stats["handle_bytes"] == @wave * @tensor_bytes
      assert stats["live_bytes"] >= @wave * @tensor_bytes

      Enum.each(pids, &Process.exit(&1, :kill))

      {status, stats} =
        wait_stats(
          srv,
          &(&1["handle_bytes"] == 0 and &1["live_tensors"] == 0 and &1["handles"] == 0)
        )

      assert status == :ok, "wave #{wave}: still held after the kills: #{inspect(stats)}"
      # what remains is the engine's own pooled buffers, not a 10 MiB tensor
      assert stats["live_bytes"] < @tensor_bytes, "wave #{wave}: #{inspect(stats)}"
      assert Nxvk.Server.owners(srv) == {0, 0}
    end
  end

  test "a process that exits normally frees its tensors; others keep theirs", %{server: srv} do
    keep = ok!(Nxvk.from_list([1.0, 2.0], server: srv))

    task =
      Task.async(fn ->
        for _ <- 1..10, do: ok!(Nxvk.from_list([1.0, 2.0, 3.0], server: srv))
        :done
      end)

    assert Task.await(task) == :done
    assert {:ok, %{"handles" => 1}} = wait_stats(srv, &(&1["handles"] == 1))
    assert ok!(Nxvk.to_list(keep)) == [1.0, 2.0]
    assert Nxvk.free(keep) == :ok
    assert ok!(Nxvk.Server.stats(srv))["handles"] == 0
  end
end
