defmodule Nxvk.Server do
  @moduledoc """
  Owns one `nxvk port` process (an Erlang port: a GPU driver crash kills
  that OS process, never this node) and passes it requests in order.

  Requests from many processes are written to the port as they come and
  answered in order (the port serves one at a time); each reply goes back
  to its caller, matched by the request id.  Requests that change no
  ownership the server keeps (`gc: true` puts, ops and runs; get, ping,
  info, stats) skip the server on the way in: the caller encodes its
  request and writes it to the port itself, and the server only forwards
  the undecoded reply to the caller, who decodes it.

  Every tensor a request creates belongs to the calling process.  The server
  monitors owners, and when one exits it frees all of that owner's tensors
  in one request.  So device memory follows the lifetime of Elixir
  processes, like binaries do.

  The binary is found when the server starts, in order: the `:binary`
  option, the `NXVK_BIN` environment variable, the `:binary` application
  setting of `:nxvk`, the `NXVK` environment variable (the one tests/run.sh
  sets), `nxvk` on the `PATH`, or `nxvk` in the build tree this project sits
  in (`../nxvk` from elixir/, where `make` puts it).  When there is none, the
  server (and so the application) still starts; every request answers
  `{:error, {:nxvk_not_found, message}}` naming the places looked in, and the
  next request looks again.

  Tensors are owned in one of two ways.  By default the calling process owns
  the handles a request makes (freed when it exits, or handed on with
  `transfer/3`).  With `gc: true` (what `Nxvk.Backend` uses) the reply
  carries, under the key `:gc`, a map from each new handle to an
  `Nxvk.GC` resource; the handle is freed when that resource is garbage
  collected in whatever process holds it last.  Frees from collection are
  batched: they go to the port just before the next request, or after 20 ms
  of quiet.  A `gc: true` request answered `alloc_failed` is retried after
  collecting the caller (at most twice; see `collect_and_retry/2`).

  The protocol is man nxvk-port(7).
  """
  use GenServer
  require Logger

  @before_compile Nxvk.Bang

  alias Nxvk.JSON

  # the build tree: elixir/ sits in the repository whose make builds ../nxvk
  @build_tree Path.expand("../../../nxvk", __DIR__)
  @default_timeout 120_000

  # ------------------------------------------------------------------ API

  @doc """
  Starts a server.  Options: `:name`, `:binary` (path of nxvk), `:args`
  (extra arguments after `port`, e.g. `["--max-frame", "64M"]`), `:env`
  (a list of `{"NAME", "value"}` for the port process).
  """
  def start_link(opts \\ []) do
    {gen_opts, opts} = Keyword.split(opts, [:name])
    GenServer.start_link(__MODULE__, opts, gen_opts)
  end

  @doc "The nxvk binary a server started with these options would run."
  def binary_path(opts \\ []) do
    case find_binary(opts) do
      {:ok, path} -> path
      {:error, _} -> @build_tree
    end
  end

  @doc """
  `{:ok, path}` of the nxvk binary to run, or `{:error, message}` saying
  where it looked.  Looked up now (run time), not when this was compiled.
  """
  def find_binary(opts \\ []) do
    explicit =
      opts[:binary] || System.get_env("NXVK_BIN") || Application.get_env(:nxvk, :binary) ||
        System.get_env("NXVK")

    cond do
      explicit && File.regular?(explicit) ->
        {:ok, explicit}

      explicit ->
        {:error, "nxvk binary not found at #{explicit} (from :binary, NXVK_BIN or NXVK)"}

      path = System.find_executable("nxvk") ->
        {:ok, path}

      File.regular?(@build_tree) ->
        {:ok, @build_tree}

      true ->
        {:error,
         "nxvk binary not found: set NXVK_BIN, put nxvk on the PATH, " <>
           "or run make in the repository (#{@build_tree})"}
    end
  end

  @doc """
  Hands `tensor` (an `Nxvk.Tensor`, or a handle) to process `pid`: from now
  on the tensor lives as long as `pid` does, not its maker.  `:ok`, or
  `{:error, {:unknown_handle, _}}` when the server has no owner for it.
  """
  def transfer(server, handle, pid) when is_integer(handle) and is_pid(pid),
    do: GenServer.call(server, {:transfer, handle, pid})

  @doc """
  Sends one request: `header` is a map (or `{:object, pairs}`) with at
  least `cmd`; `data` the tensor bytes after it.  Returns
  `{:ok, reply_header_map, reply_bytes}` or `{:error, {code, message}}`
  with `code` an atom such as `:unknown_handle`.

  Handles in a successful reply (`handle`, `outputs[].handle`) become the
  caller's; handles in a `free` request stop being anyone's.
  """
  def request(server, header, data \\ <<>>, opts \\ []) do
    timeout = opts[:timeout] || Application.get_env(:nxvk, :timeout, @default_timeout)
    mode = if opts[:gc], do: :gc, else: :owner

    call = fn ->
      try do
        GenServer.call(server, {:request, header, data, mode}, timeout)
      catch
        :exit, reason -> {:error, {:server_down, Exception.format_exit(reason)}}
      end
    end

    reply =
      case direct(server, header, data, mode, timeout) do
        :no_direct -> call.()
        reply -> reply
      end

    case reply do
      # the retry goes through the server, which sends the frees from
      # collection to the port ahead of it
      {:error, {:alloc_failed, _}} when mode == :gc -> collect_and_retry(call, [0, 10])
      reply -> reply
    end
  end

  # The hot path: the caller writes its request to the port itself (any
  # process may command a port; the frames of one command are never
  # interleaved with another's) and waits for the reply, which the server
  # forwards undecoded, matched by id, to the caller's alias.  The caller
  # encodes and decodes in its own process, and the server does no more
  # than look up the id: one message hop less each way, and callers no
  # longer queue behind each other's JSON.  Only requests that change no
  # ownership the server keeps take it: put, op and run made with `gc:
  # true` (their handles are freed by collection), and get, ping, info and
  # stats.  Anything else, or a server whose port is not open, goes through
  # the server (`:no_direct`).
  defp direct(server, header, data, mode, timeout) do
    pid = if is_pid(server), do: server, else: GenServer.whereis(server)

    with true <- is_pid(pid),
         {port, tab, ids} <- :persistent_term.get({__MODULE__, pid}, nil),
         {pairs, cmd} = header_pairs(header),
         true <-
           (mode == :gc and cmd in ["put", "op", "run", "exec"]) or
             cmd in ["get", "ping", "info", "stats"] do
      id = :atomics.add_get(ids, 1, 1)
      frame = encode_header(id, pairs)
      # the reply goes to the alias, which dies with the monitor: a reply
      # after a timeout is dropped, as a late GenServer reply is
      mref = :erlang.monitor(:process, pid, [{:alias, :demonitor}])
      :ets.insert(tab, {id, mref, self(), cmd})

      sent =
        try do
          Port.command(port, [<<:erlang.iolist_size(frame)::unsigned-32>>, frame, data])
        rescue
          ArgumentError -> false
        end

      if sent do
        receive do
          {^mref, payload} ->
            Process.demonitor(mref, [:flush])
            direct_answer(pid, mode, cmd, payload)

          {:DOWN, ^mref, _, _, {:port_exited, status}} ->
            {:error, {:port_exited, "nxvk port exited with status #{status}"}}

          {:DOWN, ^mref, _, _, reason} ->
            {:error, {:server_down, Exception.format_exit(reason)}}
        after
          timeout ->
            Process.demonitor(mref, [:flush])
            # the server frees what the late reply makes (unless it took the entry just now)
            :ets.update_element(tab, id, {2, :abandoned})
            {:error, {:server_down, "no reply from the nxvk port within #{timeout} ms"}}
        end
      else
        # the port closed under us: the server knows why
        Process.demonitor(mref, [:flush])
        :ets.delete(tab, id)
        :no_direct
      end
    else
      _ -> :no_direct
    end
  end

  defp direct_answer(server, mode, cmd, payload) do
    case decode_reply(payload) do
      {:ok, %{"ok" => true} = reply, bytes}
      when mode == :gc and cmd in ["put", "op", "run", "exec"] ->
        handles = new_handles(reply)

        refs =
          try do
            Map.new(handles, &{&1, Nxvk.GC.make(server, &1)})
          rescue
            # no NIF (built without a C compiler): the caller owns them
            _ in [ErlangError, UndefinedFunctionError] ->
              GenServer.call(server, {:own, self(), handles})
              %{}
          end

        {:ok, Map.put(reply, :gc, refs), bytes}

      {:ok, %{"ok" => true} = reply, bytes} ->
        {:ok, reply, bytes}

      {:ok, reply, _bytes} ->
        error_of(reply)

      {:error, why} ->
        {:error, {:bad_reply, why}}
    end
  end

  defp error_of(reply) do
    error = reply["error"] || %{}
    code = error["code"] || "bad_reply"
    {:error, {String.to_atom(code), error["message"] || ""}}
  end

  # Device memory full (or the port's --max-bytes cap reached) while tensors
  # are freed by collection: the caller's dead tensors may not be collected
  # yet (a loop of tiny terms in a large heap collects rarely, and the old
  # heap keeps dead tensors until a full sweep), so collect the caller and
  # retry, at most twice, then give the error back.  Collection is cheaper
  # and simpler than tracking live bytes here, and it costs nothing until
  # memory is full.  Ordering: the NIF destructor runs as scheduler aux work
  # after garbage_collect/0 returns, when the caller is scheduled out; so the
  # caller yields (then, the second time, sleeps 10 ms) before retrying, and
  # the {:nxvk_gc, h} messages reach the server before the retried request,
  # whose handle_call sends them to the port as one free ahead of it.
  defp collect_and_retry(call, [pause | pauses]) do
    :erlang.garbage_collect()
    if pause == 0, do: :erlang.yield(), else: Process.sleep(pause)

    case call.() do
      {:error, {:alloc_failed, _}} when pauses != [] -> collect_and_retry(call, pauses)
      reply -> reply
    end
  end

  @doc "The port's counters (the `stats` reply) as a map with string keys."
  def stats(server \\ __MODULE__), do: simple(server, "stats")

  @doc "The port's `info` reply: device, dtypes, limits, ops."
  def info(server \\ __MODULE__), do: simple(server, "info")

  @doc "Round trip through the port."
  def ping(server \\ __MODULE__), do: simple(server, "ping")

  @doc "How many processes own tensors, and how many tensors (for tests)."
  def owners(server \\ __MODULE__), do: GenServer.call(server, :owners)

  @doc "The operating-system pid of the `nxvk port` process."
  def os_pid(server \\ __MODULE__), do: GenServer.call(server, :os_pid)

  defp simple(server, cmd) do
    case request(server, %{"cmd" => cmd}) do
      {:ok, reply, _} -> {:ok, Map.drop(reply, ["id", "ok"])}
      error -> error
    end
  end

  # ------------------------------------------------------------ callbacks

  @impl true
  def init(opts) do
    Process.flag(:trap_exit, true)

    state = %{
      port: nil,
      opts: opts,
      pending: %{},
      owners: %{},
      owner_of: %{},
      gc_frees: [],
      gc_timer: nil,
      # direct requests in flight: {id, the caller's alias (or :abandoned), pid, cmd} (see direct/5)
      direct: :ets.new(__MODULE__, [:public, :set, write_concurrency: true]),
      # request ids, shared with direct callers
      ids: :atomics.new(1, [])
    }

    # a missing binary is not fatal: the application boots, and requests
    # say what is missing (and look again)
    {:ok, open_port(state)}
  end

  defp open_port(%{port: nil} = state) do
    case find_binary(state.opts) do
      {:ok, bin} ->
        args = ["port" | Keyword.get(state.opts, :args, [])]

        env =
          for {k, v} <- Keyword.get(state.opts, :env, []), do: {to_charlist(k), to_charlist(v)}

        # the port's stderr stays separate: merged, it would corrupt the frames
        port =
          Port.open({:spawn_executable, bin}, [
            {:packet, 4},
            :binary,
            :exit_status,
            :use_stdio,
            args: args,
            env: env
          ])

        :persistent_term.put({__MODULE__, self()}, {port, state.direct, state.ids})
        %{state | port: port}

      {:error, _} ->
        state
    end
  end

  defp open_port(state), do: state

  @impl true
  def handle_call({:request, header, data, mode}, {caller, _} = from, state) do
    case open_port(state) do
      %{port: nil} = state ->
        {:error, message} = find_binary(state.opts)
        {:reply, {:error, {:nxvk_not_found, message}}, state}

      state ->
        {pairs, cmd} = header_pairs(header)
        state = if cmd == "free", do: disown(state, freed_handles(pairs)), else: state
        state = flush_gc(state)
        # only put, op, run and exec make handles (a get's reply names one it reads)
        owner =
          cond do
            cmd not in ["put", "op", "run", "exec"] -> :none
            mode == :gc -> {:gc, caller}
            true -> caller
          end

        {:noreply, send_request(state, pairs, data, {from, owner})}
    end
  end

  def handle_call({:transfer, handle, pid}, _from, state) do
    case Map.fetch(state.owner_of, handle) do
      {:ok, _old} -> {:reply, :ok, state |> disown([handle]) |> own(pid, [handle])}
      :error -> {:reply, {:error, {:unknown_handle, "no owner holds handle #{handle}"}}, state}
    end
  end

  def handle_call(:os_pid, _from, state) do
    case open_port(state) do
      %{port: nil} = state -> {:reply, nil, state}
      state -> {:reply, elem(Port.info(state.port, :os_pid), 1), state}
    end
  end

  def handle_call({:own, pid, handles}, _from, state), do: {:reply, :ok, own(state, pid, handles)}

  def handle_call(:owners, _from, state) do
    {:reply, {map_size(state.owners), map_size(state.owner_of)}, state}
  end

  @impl true
  def handle_info({port, {:data, payload}}, %{port: port} = state) do
    case peek_id(payload) && :ets.take(state.direct, peek_id(payload)) do
      [{_id, alias, pid, cmd}] ->
        if alias != :abandoned and Process.alive?(pid) do
          send(alias, {alias, payload})
          {:noreply, state}
        else
          {:noreply, orphan(state, cmd, payload)}
        end

      _ ->
        {:noreply, handle_reply(payload, state)}
    end
  end

  def handle_info({:nxvk_gc, handle}, state) do
    state = %{state | gc_frees: [handle | state.gc_frees]}

    cond do
      length(state.gc_frees) >= 1024 -> {:noreply, flush_gc(state)}
      state.gc_timer -> {:noreply, state}
      true -> {:noreply, %{state | gc_timer: Process.send_after(self(), :gc_flush, 20)}}
    end
  end

  def handle_info(:gc_flush, state), do: {:noreply, flush_gc(%{state | gc_timer: nil})}

  def handle_info({:DOWN, _ref, :process, pid, _reason}, state) do
    case Map.pop(state.owners, pid) do
      {nil, _} ->
        {:noreply, state}

      {{_ref, handles}, owners} ->
        handles = MapSet.to_list(handles)
        state = %{state | owners: owners, owner_of: Map.drop(state.owner_of, handles)}
        {:noreply, free_internal(state, handles)}
    end
  end

  def handle_info({port, {:exit_status, status}}, %{port: port} = state) do
    message = "nxvk port exited with status #{status}"

    for {_id, {{_, _} = from, _owner}} <- state.pending,
        do: GenServer.reply(from, {:error, {:port_exited, message}})

    {:stop, {:port_exited, status}, %{state | pending: %{}, port: nil, gc_frees: []}}
  end

  def handle_info({:EXIT, port, _reason}, %{port: port} = state), do: {:noreply, state}
  def handle_info({:EXIT, _other, reason}, state), do: {:stop, reason, state}
  def handle_info(_other, state), do: {:noreply, state}

  @impl true
  def terminate(_reason, %{port: port}) when is_port(port) do
    :persistent_term.erase({__MODULE__, self()})
    # end of input: the port frees everything and exits 0
    try do
      Port.close(port)
    rescue
      ArgumentError -> :ok
    end
  end

  def terminate(_reason, _state) do
    :persistent_term.erase({__MODULE__, self()})
    :ok
  end

  # ------------------------------------------------------------- internals

  # a request already JSON (Nxvk.Graph.raw_header/2): the members after the id
  defp header_pairs({:raw, cmd, members}), do: {{:raw, members}, cmd}

  defp header_pairs({:object, pairs}),
    do: with_cmd(Enum.map(pairs, fn {k, v} -> {to_string(k), v} end))

  defp header_pairs(map) when is_map(map),
    do: with_cmd(Enum.map(map, fn {k, v} -> {to_string(k), v} end))

  defp with_cmd(pairs) do
    pairs = List.keydelete(pairs, "id", 0)
    {pairs, List.keyfind(pairs, "cmd", 0) |> then(fn t -> t && elem(t, 1) end)}
  end

  defp freed_handles(pairs) do
    case {List.keyfind(pairs, "handle", 0), List.keyfind(pairs, "handles", 0)} do
      {{_, h}, _} when is_integer(h) -> [h]
      {_, {_, hs}} when is_list(hs) -> Enum.filter(hs, &is_integer/1)
      _ -> []
    end
  end

  # entry: {from, owner} for a caller; {:internal, handles} for our own frees
  defp send_request(state, pairs, data, entry) do
    id = :atomics.add_get(state.ids, 1, 1)
    header = encode_header(id, pairs)
    true = Port.command(state.port, [<<:erlang.iolist_size(header)::unsigned-32>>, header, data])
    %{state | pending: Map.put(state.pending, id, entry)}
  end

  defp encode_header(id, {:raw, members}),
    do: ["{\"id\":", Integer.to_string(id), ?,, members, ?}]

  defp encode_header(id, pairs), do: JSON.encode!({:object, [{"id", id} | pairs]})

  defp free_internal(state, []), do: state
  defp free_internal(%{port: nil} = state, _handles), do: state

  defp free_internal(state, handles) do
    send_request(state, [{"cmd", "free"}, {"handles", handles}], <<>>, {:internal, handles})
  end

  # a direct reply whose caller died or gave up waiting: nobody will make the
  # GC resources of the handles it made, so free them now
  defp orphan(state, cmd, payload) do
    case decode_reply(payload) do
      {:ok, %{"ok" => true} = reply, _} when cmd in ["put", "op", "run", "exec"] ->
        free_internal(state, new_handles(reply))

      _ ->
        state
    end
  end

  defp handle_reply(payload, state) do
    case decode_reply(payload) do
      {:ok, reply, bytes} ->
        {entry, pending} = Map.pop(state.pending, reply["id"])
        answer(%{state | pending: pending}, entry, reply, bytes)

      {:error, why} ->
        Logger.error("nxvk port: unreadable reply: #{why}")
        state
    end
  end

  # the id of a reply without decoding it: the port writes it first
  # ({"id":N,...}); nil for anything else
  defp peek_id(<<_::unsigned-32, "{\"id\":", c, rest::binary>>) when c in ?1..?9,
    do: peek_digits(rest, c - ?0)

  defp peek_id(_), do: nil

  defp peek_digits(<<c, rest::binary>>, acc) when c in ?0..?9,
    do: peek_digits(rest, acc * 10 + (c - ?0))

  defp peek_digits(<<?,, _::binary>>, acc), do: acc
  defp peek_digits(_, _), do: nil

  defp decode_reply(<<hlen::unsigned-32, header::binary-size(hlen), bytes::binary>>) do
    case JSON.decode(header) do
      {:ok, %{} = reply} -> {:ok, reply, bytes}
      {:ok, _} -> {:error, "reply header is not an object"}
      error -> error
    end
  end

  defp decode_reply(_), do: {:error, "reply shorter than its header length"}

  defp answer(state, nil, reply, _bytes) do
    Logger.warning("nxvk port: reply to no request: #{inspect(reply)}")
    state
  end

  defp answer(state, {:internal, handles}, %{"ok" => false} = reply, _bytes) do
    # all-or-nothing free failed on one handle: free the others one by one
    if length(handles) > 1 do
      Enum.reduce(handles, state, &free_internal(&2, [&1]))
    else
      Logger.warning("nxvk port: freeing #{inspect(handles)}: #{inspect(reply["error"])}")
      state
    end
  end

  defp answer(state, {:internal, _}, _reply, _bytes), do: state

  defp answer(state, {from, {:gc, _caller} = owner}, %{"ok" => true} = reply, bytes) do
    server = self()
    handles = new_handles(reply)

    try do
      refs = Map.new(handles, &{&1, Nxvk.GC.make(server, &1)})
      GenServer.reply(from, {:ok, Map.put(reply, :gc, refs), bytes})
      state
    rescue
      # no NIF (built without a C compiler): the caller owns them, as by default
      _ in [ErlangError, UndefinedFunctionError] ->
        {_, caller} = owner
        GenServer.reply(from, {:ok, Map.put(reply, :gc, %{}), bytes})
        own(state, caller, handles)
    end
  end

  defp answer(state, {from, :none}, %{"ok" => true} = reply, bytes) do
    GenServer.reply(from, {:ok, reply, bytes})
    state
  end

  defp answer(state, {from, owner}, %{"ok" => true} = reply, bytes) do
    state = own(state, owner, new_handles(reply))
    GenServer.reply(from, {:ok, reply, bytes})
    state
  end

  defp answer(state, {from, _owner}, reply, _bytes) do
    GenServer.reply(from, error_of(reply))
    state
  end

  defp new_handles(reply) do
    outputs = if is_list(reply["outputs"]), do: reply["outputs"], else: []
    for %{"handle" => h} <- [reply | outputs], is_integer(h), do: h
  end

  defp flush_gc(%{gc_frees: []} = state), do: state
  defp flush_gc(%{port: nil} = state), do: state

  defp flush_gc(state) do
    if state.gc_timer, do: Process.cancel_timer(state.gc_timer)
    free_internal(%{state | gc_frees: [], gc_timer: nil}, Enum.reverse(state.gc_frees))
  end

  defp own(state, _owner, []), do: state

  defp own(state, owner, handles) do
    {ref, set} =
      case state.owners do
        %{^owner => entry} -> entry
        # monitoring a process that already exited delivers :DOWN at once
        _ -> {Process.monitor(owner), MapSet.new()}
      end

    owner_of = Enum.reduce(handles, state.owner_of, &Map.put(&2, &1, owner))
    set = Enum.reduce(handles, set, &MapSet.put(&2, &1))
    %{state | owners: Map.put(state.owners, owner, {ref, set}), owner_of: owner_of}
  end

  defp disown(state, handles) do
    Enum.reduce(handles, state, fn h, st ->
      case Map.pop(st.owner_of, h) do
        {nil, _} ->
          st

        {owner, owner_of} ->
          {ref, set} = Map.fetch!(st.owners, owner)
          set = MapSet.delete(set, h)

          owners =
            if MapSet.size(set) == 0 do
              Process.demonitor(ref, [:flush])
              Map.delete(st.owners, owner)
            else
              Map.put(st.owners, owner, {ref, set})
            end

          %{st | owners: owners, owner_of: owner_of}
      end
    end)
  end
end
