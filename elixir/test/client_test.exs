defmodule Nxvk.ClientTest do
  # The plain client's conveniences: ! variants, a tensor handed to another
  # process, the binary found at run time and a clear error when it is not.
  use ExUnit.Case, async: false
  import Nxvk.TestHelpers

  test "! variants return the value or raise Nxvk.Error with the port's code" do
    a = Nxvk.from_list!([1.0, 2.0])
    assert Nxvk.to_list!(Nxvk.add!(a, a)) == [2.0, 4.0]
    assert %{"handles" => _} = Nxvk.Server.stats!()
    b = Nxvk.from_list!([1.0, 2.0, 3.0])
    err = assert_raise Nxvk.Error, fn -> Nxvk.add!(a, b) end
    assert err.code == :shape_mismatch
    assert Nxvk.free!(a) == :ok
  end

  test "a tensor handed to the caller survives the Task that made it" do
    parent = self()

    t =
      Task.async(fn ->
        t = Nxvk.iota!({4}, type: :f32)
        :ok = Nxvk.transfer(t, parent)
        t
      end)
      |> Task.await()

    Process.sleep(50)
    assert Nxvk.to_list!(t) == [0.0, 1.0, 2.0, 3.0]

    # not handed over: freed with its maker
    u = Task.async(fn -> Nxvk.iota!({4}, type: :f32) end) |> Task.await()
    Process.sleep(50)
    assert {:error, {:unknown_handle, _}} = Nxvk.to_list(u)
  end

  test "the binary is looked up at run time; without one the server starts and says so" do
    assert {:ok, path} = Nxvk.Server.find_binary()
    assert File.regular?(path)

    srv = start_supervised!({Nxvk.Server, binary: "/nonexistent/nxvk"})
    assert {:error, {:nxvk_not_found, msg}} = Nxvk.Server.ping(srv)
    assert msg =~ "/nonexistent/nxvk"
    assert {:error, {:nxvk_not_found, _}} = Nxvk.from_list([1.0], server: srv)
    assert_raise Nxvk.Error, ~r/nxvk_not_found/, fn -> Nxvk.from_list!([1.0], server: srv) end

    # PATH is searched when nothing is set explicitly
    dir = Path.join(System.tmp_dir!(), "nxvk-path-#{System.unique_integer([:positive])}")
    File.mkdir_p!(dir)
    File.ln_s!(path, Path.join(dir, "nxvk"))
    old = {System.get_env("PATH"), System.get_env("NXVK"), System.get_env("NXVK_BIN")}

    try do
      System.delete_env("NXVK")
      System.delete_env("NXVK_BIN")
      System.put_env("PATH", dir <> ":" <> elem(old, 0))
      assert Nxvk.Server.find_binary() == {:ok, Path.join(dir, "nxvk")}
    after
      System.put_env("PATH", elem(old, 0))
      if elem(old, 1), do: System.put_env("NXVK", elem(old, 1))
      if elem(old, 2), do: System.put_env("NXVK_BIN", elem(old, 2))
      File.rm_rf!(dir)
    end

    _ = ok!(Nxvk.Server.ping())
  end
end
