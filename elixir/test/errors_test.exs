defmodule Nxvk.ErrorsTest do
  # Errors come back as {:error, {code, message}}; a bad request, even a
  # malformed frame, never stops the server.
  use ExUnit.Case, async: true
  import Nxvk.TestHelpers

  defp t(list, opts \\ []), do: ok!(Nxvk.from_list(list, opts))

  defp assert_error(result, code) do
    assert {:error, {^code, message}} = result
    assert is_binary(message) and message != ""
    message
  end

  test "engine errors surface with their code and a message" do
    a = t([[1.0, 2.0], [3.0, 4.0]])
    msg = assert_error(Nxvk.add(a, t([1.0, 2.0, 3.0])), :shape_mismatch)
    assert msg =~ "add"
    assert_error(Nxvk.add(a, t([[1, 2], [3, 4]])), :dtype_mismatch)
    assert_error(Nxvk.exp(t([1, 2])), :unsupported_dtype)
    assert_error(Nxvk.op("no_such_op", [a]), :unknown_op)
    assert_error(Nxvk.sum(a, axes: [0], keep_axes: "yes"), :bad_attr)
    assert_error(Nxvk.op("add", [a]), :bad_request)
    assert_error(Nxvk.dot(a, t([1.0, 2.0, 3.0])), :shape_mismatch)
    assert_error(Nxvk.reshape(a, {3}), :shape_mismatch)
    assert_error(Nxvk.from_binary(<<0, 0, 0>>, :f32, {1}), :size_mismatch)
    assert_error(Nxvk.from_list([1.0], type: :f16), :unsupported_dtype)
    assert_error(Nxvk.from_list([[1.0, 2.0], [3.0]]), :bad_request)
    # the server is still there and right
    assert ok!(Nxvk.to_list(a)) == [[1.0, 2.0], [3.0, 4.0]]
  end

  test "a freed tensor is an unknown handle" do
    a = t([1.0])
    assert Nxvk.free(a) == :ok
    assert_error(Nxvk.to_list(a), :unknown_handle)
    assert_error(Nxvk.exp(a), :unknown_handle)
    assert_error(Nxvk.free(a), :unknown_handle)
  end

  test "graph errors name the op" do
    x = t([1.0, 2.0])

    msg =
      assert_error(
        Nxvk.run_graph(%{
          inputs: %{"x" => x},
          ops: [%{op: "add", in: ["x", "nope"], out: "y"}],
          outputs: ["y"]
        }),
        :bad_request
      )

    assert msg =~ "nope"
    bad = %{inputs: %{"x" => x}, ops: [%{op: "dot", in: ["x", "x"], out: "y"}], outputs: ["y"]}
    assert_error(Nxvk.run_graph(bad), :shape_mismatch)
  end

  describe "raw frames through a separate port" do
    setup do
      port =
        Port.open({:spawn_executable, Nxvk.Server.binary_path()}, [
          {:packet, 4},
          :binary,
          :exit_status,
          args: ["port", "--max-frame", "4K"]
        ])

      on_exit(fn -> if Port.info(port), do: Port.close(port) end)
      %{port: port}
    end

    defp roundtrip(port, payload) do
      true = Port.command(port, payload)

      receive do
        {^port, {:data, <<hlen::32, header::binary-size(hlen), bytes::binary>>}} ->
          {:ok, reply} = Nxvk.JSON.decode(header)
          {reply, bytes}

        {^port, {:exit_status, status}} ->
          flunk("the port exited with status #{status}")
      after
        30_000 -> flunk("no reply")
      end
    end

    defp frame(header, bytes \\ <<>>) when is_binary(header),
      do: <<byte_size(header)::32, header::binary, bytes::binary>>

    defp error_code(port, payload) do
      {reply, bytes} = roundtrip(port, payload)
      assert reply["ok"] == false
      assert bytes == <<>>
      {reply["error"]["code"], reply["id"]}
    end

    test "each malformed frame gets an error reply and the server keeps serving", %{port: port} do
      cases = [
        {<<>>, "bad_request", nil},
        {<<0, 0>>, "bad_request", nil},
        {<<0, 0, 0, 0>>, "bad_request", nil},
        {<<0, 0, 0, 100, "{}">>, "bad_request", nil},
        {frame("not json"), "bad_request", nil},
        {frame("[1, 2]"), "bad_request", nil},
        {frame(~s({"id": 1, "cmd": "ping"} trailing)), "bad_request", nil},
        {frame(<<"{\"id\": 2, \"cmd\": \"ping\", \"echo\": \"", 0xFF, "\"}">>), "bad_request",
         nil},
        {frame(~s({"id": 3})), "bad_request", 3},
        {frame(~s({"id": 4, "cmd": "no_such_command"})), "bad_request", 4},
        {frame(~s({"id": 5, "cmd": "get", "handle": 987654})), "unknown_handle", 5},
        {frame(~s({"id": 6, "cmd": "put", "dtype": "f32", "shape": [4]}), <<0::120>>),
         "size_mismatch", 6},
        {frame(~s({"id": 7, "cmd": "put", "dtype": "c64", "shape": [1]}), <<0::64>>),
         "unsupported_dtype", 7},
        {frame(~s({"id": 8, "cmd": "stats", "extra": 1})), "bad_request", 8},
        {frame(~s({"id": 9, "cmd": "op", "op": "nope", "in": []})), "unknown_op", 9},
        {frame(~s({"id": 10, "cmd": "ping"}), :binary.copy(<<0>>, 8192)), "too_large", 10}
      ]

      for {payload, code, id} <- cases do
        assert error_code(port, payload) == {code, id}, "payload #{inspect(payload, limit: 40)}"
        # and still alive, in step
        {reply, bytes} = roundtrip(port, frame(~s({"id": "alive", "cmd": "ping"}), "xyz"))
        assert {reply["id"], reply["ok"], bytes} == {"alive", true, "xyz"}
      end

      {stats, _} = roundtrip(port, frame(~s({"cmd": "stats"})))
      assert stats["errors"] == length(cases)
    end
  end

  test "device loss: old handles answer device_lost, the next request re-creates the device" do
    srv = start_supervised!({Nxvk.Server, env: [{"NXVK_TEST_HOOKS", "1"}]})
    old = ok!(Nxvk.from_list([1.0, 2.0], server: srv))
    assert ok!(Nxvk.Server.stats(srv))["generation"] == 1
    assert {:ok, _, _} = Nxvk.Server.request(srv, %{cmd: "debug_lose_device"})

    assert_error(Nxvk.to_list(old), :device_lost)
    assert_error(Nxvk.exp(old), :device_lost)
    stats = ok!(Nxvk.Server.stats(srv))
    assert {stats["generation"], stats["device_losses"], stats["lost_handles"]} == {2, 1, 1}

    fresh = ok!(Nxvk.from_list([3.0, 4.0], server: srv))
    assert ok!(Nxvk.to_list(ok!(Nxvk.add(fresh, 1.0)))) == [4.0, 5.0]
    assert Nxvk.free(old) == :ok
    assert ok!(Nxvk.Server.stats(srv))["lost_handles"] == 0
  end

  @tag :capture_log
  test "a crash of the port process is an error for its callers, not a crash of theirs" do
    srv = start_supervised!({Nxvk.Server, []}, restart: :temporary)
    ref = Process.monitor(srv)
    t = ok!(Nxvk.from_list([1.0], server: srv))
    System.cmd("kill", ["-KILL", Integer.to_string(Nxvk.Server.os_pid(srv))])
    assert_receive {:DOWN, ^ref, :process, ^srv, {:port_exited, _}}, 30_000
    assert {:error, {code, message}} = Nxvk.to_list(t)
    assert code in [:port_exited, :server_down] and is_binary(message)
    # the node and the default server are fine
    assert ok!(Nxvk.Server.ping())["pong"] == true
  end

  test "without NXVK_TEST_HOOKS the debug command does not exist" do
    assert {:error, {:bad_request, _}} =
             Nxvk.Server.request(Nxvk.Server, %{cmd: "debug_lose_device"})
  end
end
