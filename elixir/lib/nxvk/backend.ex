if Code.ensure_loaded?(Nx) do
  defmodule Nxvk.Backend do
    @moduledoc """
    An `Nx.Backend` over `nxvk port`: tensors live in device memory, ops run
    on the GPU (or lavapipe), and the GPU driver runs in its own OS process.

        Nx.default_backend(Nxvk.Backend)
        a = Nx.tensor([[1.0, 2.0], [3.0, 4.0]])
        Nx.add(a, 1.0) |> Nx.exp() |> Nx.sum(axes: [1])

    Options: `device: N` (default 0) picks the port, one `nxvk port` per
    device, started on first use (`Nx.default_backend({Nxvk.Backend, device: 1})`).
    The physical device a port opens is N, unless the application setting
    `:device_map` (a map N => index) says otherwise; `:device_env` (a map
    N => [{"NAME", "value"}]) adds environment variables to that port
    (the tests start a port with `NXVK_TEST_INJECT=no_int64` this way).

    ## What runs where

    Every callback either runs on the engine ("native") or falls back to
    `Nx.BinaryBackend`: the inputs are downloaded, the op runs in Elixir,
    and the result is uploaded again.  Nothing raises because a type or op
    is missing on the engine.  `stats/0` counts, per callback, how many
    calls ran each way, and every call emits the telemetry event
    `[:nxvk, :backend, :call]` with measurement `%{count: 1}` and metadata
    `%{callback: name, path: :native | :fallback, device: n}` (a fallback's
    with `types:` too, the types of its result and tensor inputs).

    Native, when the types allow (inputs are converted to the result type
    inside the same request, as Nx does):

      * element-wise: `add subtract multiply max min` and the comparisons
        (every type; a u64 against a signed integer compared exactly, as
        Nx, `max`/`min` too), `remainder` (every type: fmod for floats, the
        sign of the dividend for integers), `pow` (floats; integers by
        square and multiply, wrapping as Nx; a negative exponent held in
        the BEAM raises Nx's ArithmeticError), `divide atan2 exp log sqrt
        rsqrt sigmoid tanh sin cos expm1 log1p erf tan asin acos atan sinh
        cosh asinh acosh atanh cbrt erfc erf_inv` (floats), `abs negate
        sign` (every type: the engine's for floats and signed integers, in
        IEEE's way for -0.0, NaN and -inf; for unsigned ones `abs` is the
        value, `negate` wraps as Nx, `sign` is min(x, 1)), `floor ceil
        round`, `is_nan is_infinity`, `select`, `clip` (NaN bounds and a
        lower bound above the upper as Nx.BinaryBackend); on integer types
        `bitwise_and bitwise_or bitwise_xor bitwise_not left_shift
        right_shift quotient count_leading_zeros population_count` (a
        negative shift count raises Nx.BinaryBackend's ArgumentError,
        naming the first; s64/u64 held as words: `bitwise_and/or/xor/not`
        word by word); `logical_and logical_or logical_xor logical_not` of
        every type;
      * reductions `sum product reduce_max reduce_min argmax argmin` (either
        `tie_break`) `all any`, and `all_close` composed of native ops (its
        scalar result held in the BEAM)
        (integer sums and products aggregated to s64/u64 as Nx does,
        wrapping; the i32 index of argmax/argmin cast to Nx's type, s64 by
        default, on the device; `reduce_max`/`reduce_min` of an empty axis
        give -inf/+inf or the type's extremes, as XLA);
      * `dot` (any contraction and batch axes: transposes and a batched
        product; integers in i32 or i64, wrapping, then cast, the same low
        bits as Nx's exact sum; an empty contraction gives zeros), `as_type` (between every pair, converting
        as Nx: a 64-bit integer to f32, f16 or bf16 through f64, as Erlang
        rounds an integer to double first; a float to an integer below
        2^63 in magnitude truncated and wrapped, -1.0 to u8 is 255),
        `bitcast` (the engine's: the same bytes, a buffer copy),
        `reshape`, `squeeze`, `broadcast`, `transpose`, `reverse`, `slice` (starts
        constant or tensors), `concatenate` (more than the port's 64 inputs
        joined 64 at a time), `to_batched` (a slice per
        batch), `iota`, `eye`, `constant`,
        `from_binary`, `to_binary`, `backend_copy/transfer/deallocate`;
      * shape and indexing: `pad` (negative and interior padding; an input
        without elements gives the pad value everywhere, Nx's shape),
        `put_slice`, `gather`, `take`, `take_along_axis`, `indexed_add`,
        `indexed_put`, with indices of any integer type the device stores.
        Out-of-range indices are clamped (gather, take, take_along_axis,
        and start indices as Nx clamps them) or dropped (indexed_add,
        indexed_put), as EXLA does; Nx.BinaryBackend raises instead.  Of
        duplicate indices indexed_put keeps the last row, as
        Nx.BinaryBackend; indexed_add sums floats in an order that may vary
        (integers exactly).  Updates smaller than the target's other axes
        are written as Nx.BinaryBackend writes them, from the start of each
        (flattened) row of the other axes: the target transposed and
        reshaped around the engine op.
      * `cumulative_sum cumulative_product cumulative_max cumulative_min`
        (forward and reverse), `sort`, `argsort` (always stable; the index
        type Nx asks for), `top_k` (values and indices, two engine ops),
        `window_sum window_product window_max window_min` (strides,
        padding, window dilations), `window_scatter_max
        window_scatter_min` (the last of equal values selected, as
        Nx.BinaryBackend; padding never selected, as EXLA: Nx.BinaryBackend
        scatters padded windows to shifted positions);
      * `conv` (every option: strides, padding, input and kernel dilation,
        feature and batch groups, the three permutations; float results,
        f16 and bf16 summed in f32), `cholesky` and `triangular_solve`
        (f32 and f64; f16 and bf16 computed in f32 and rounded once; a zero
        on triangular_solve's diagonal raises as Nx does, checked on the
        device).

    The engine stores f16, bf16, f32, f64, s8, s16, s32, s64, u8, u16, u32
    and u64 (its f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64); its
    comparisons give bool, read as u8.  A device without 16-bit storage or
    f64 refuses those and the call falls back.  A device without
    shaderInt64 (`int64?/1`, from the port's `info`) refuses i64 and u64:
    there s64 and u64, like c64 and c128 on every device, are held as their
    raw 32-bit words (an s32 tensor with one more axis): exact, and `reshape
    squeeze transpose broadcast slice concatenate select iota` run on them
    natively, as do s64/u64 `add subtract multiply` (modulo 2^64, with the
    carries between the words), `sum` of s64, u64, s32 and u8 (16-bit limbs
    summed exactly in f64, then carried), the comparisons, `argmax` and
    `argmin` of the device's types (a zero high word), and `as_type`
    between them and s32, u8, f32, f64; their other ops fall back.

    ## Fallbacks

    A callback falls back where it is not named above, or where its types
    are not native.  That leaves, as [nx-ops] allows (Nx's doctests fail on
    any other fallback: `test/nx_doctest_test.exs`):

      * the callbacks that take Elixir functions: `map reduce
        window_reduce`;
      * `fft ifft` (`fft2 ifft2` are Nx's composition of them);
      * complex types (c64 and c128, held as words on every device): any
        callback whose result or inputs are complex (`conjugate real imag`
        always), beyond the element moves above;
      * `lu eigh` (Nx.BinaryBackend's).  `qr svd solve determinant phase`
        are not callbacks here: Nx's own definitions run on the native ops
        (`solve` is qr, dot and triangular_solve; `svd` calls `eigh`;
        `determinant` of a matrix larger than 3x3 calls `lu`);
      * the device's limits: a type it does not store (no 16-bit storage,
        no f64; without shaderInt64 the s64/u64 ops the words lack, among
        them 64-bit `dot`, integer `product` and the integer `sum` of other
        types or without f64), f64 `indexed_add` without 64-bit float
        atomics, a tensor larger than it takes.

    Every fallback's telemetry event carries `:types`, the types of its
    result and tensor inputs.

    ## Lifetime

    A device tensor is freed when its term is garbage collected in the last
    process that holds it (an `Nxvk.GC` resource: the NIF only sends the
    port server a message), by `Nx.backend_deallocate/1`, or when the
    server stops.  Tensors pass freely between processes.  When a request
    finds device memory (or the port's `--max-bytes` cap) full, the calling
    process is garbage-collected and the request retried, at most twice: a
    tight loop's uncollected garbage never makes it fail, and a genuine out
    of memory still raises `alloc_failed`.
    """
    @behaviour Nx.Backend

    # words: for a type the device lacks but whose elements are whole 32-bit
    # words (c64: 2; c128: 4; s64 and u64 on a device without shaderInt64:
    # 2), the device holds the raw words as an i32 tensor of shape ++
    # [words]: exact, and ops that only move elements run on it natively;
    # nil for the device's own types
    defstruct [:server, :handle, :ref, :host, :words, device: 0]

    @doc false
    # the words a type is held as on device n (nil: held as itself)
    def words(type, device) do
      case type do
        {:c, 64} -> 2
        {:c, 128} -> 4
        {k, 64} when k in [:s, :u] -> if int64?(device), do: nil, else: 2
        _ -> nil
      end
    end

    alias Nx.Tensor, as: T
    alias Nxvk.Graph, as: G

    @small_constant 256

    # ------------------------------------------------------------- devices

    @doc "The server (pid) for device `n`, started on first use."
    def server(n \\ 0)

    def server(0) do
      GenServer.whereis(Nxvk.Server) || raise "nxvk: the application (Nxvk.Server) is not running"
    end

    def server(n) when is_integer(n) and n > 0 do
      name = :"Elixir.Nxvk.Server.#{n}"

      case GenServer.whereis(name) do
        nil ->
          physical = Map.get(Application.get_env(:nxvk, :device_map, %{}), n, n)

          env = [
            {"NXVK_DEVICE", "#{physical}"}
            | Map.get(Application.get_env(:nxvk, :device_env, %{}), n, [])
          ]

          spec = %{id: name, start: {Nxvk.Server, :start_link, [[name: name, env: env]]}}

          case Supervisor.start_child(Nxvk.Supervisor, spec) do
            {:ok, pid} ->
              pid

            {:error, {:already_started, pid}} ->
              pid

            {:error, :already_present} ->
              Supervisor.restart_child(Nxvk.Supervisor, name)
              server(n)

            {:error, reason} ->
              raise "nxvk: cannot start the port for device #{n}: #{inspect(reason)}"
          end

        pid ->
          pid
      end
    end

    @doc """
    Whether device `n` stores s64 and u64 as themselves (the engine's i64
    and u64: the device has shaderInt64, as the port's `info` says in
    `dtypes`).  Without it they are held as 32-bit words (see "What runs
    where").  Asked once per port.
    """
    def int64?(n \\ 0) do
      s = server(n)
      key = {__MODULE__, :int64, s}

      case :persistent_term.get(key, nil) do
        nil ->
          case Nxvk.Server.info(s) do
            {:ok, %{"dtypes" => dtypes}} ->
              v = "i64" in dtypes and "u64" in dtypes
              :persistent_term.put(key, v)
              v

            # no binary yet: nothing can be uploaded either; ask again later
            _ ->
              false
          end

        v ->
          v
      end
    end

    defp new_graph(s, device), do: G.new(s, device, int64?(device))

    # --------------------------------------------------------------- stats

    @callbacks for({name, _} <- Nx.Backend.behaviour_info(:callbacks), uniq: true, do: name)
               |> Enum.sort()
    @index @callbacks |> Enum.with_index() |> Map.new()

    defp counters do
      case :persistent_term.get({__MODULE__, :counters}, nil) do
        nil ->
          c = :counters.new(2 * length(@callbacks), [:write_concurrency])
          :persistent_term.put({__MODULE__, :counters}, c)
          c

        c ->
          c
      end
    end

    @doc """
    Calls per callback since start (or `reset_stats/0`):
    `%{add: %{native: 10, fallback: 0}, ...}`, only callbacks called.
    """
    def stats do
      c = counters()

      for {name, i} <- @index,
          n = :counters.get(c, 2 * i + 1),
          f = :counters.get(c, 2 * i + 2),
          n + f > 0,
          into: %{},
          do: {name, %{native: n, fallback: f}}
    end

    @doc "Sets every count to zero."
    def reset_stats do
      c = counters()
      for i <- 1..(2 * length(@callbacks)), do: :counters.put(c, i, 0)
      :ok
    end

    # types: for a fallback, the types of its result and tensor inputs (the
    # telemetry metadata's :types, so a caller can tell a complex fallback)
    defp count(name, path, device, types \\ []) do
      i = Map.fetch!(@index, name)
      :counters.add(counters(), 2 * i + if(path == :native, do: 1, else: 2), 1)
      meta = %{callback: name, path: path, device: device}
      meta = if path == :fallback, do: Map.put(meta, :types, types), else: meta
      :telemetry.execute([:nxvk, :backend, :call], %{count: 1}, meta)
    end

    # the distinct types of the tensors in a term (lists and tuples walked)
    defp types_of(term), do: term |> types_acc([]) |> Enum.uniq()

    defp types_acc(%T{type: ty}, acc), do: [ty | acc]
    defp types_acc(list, acc) when is_list(list), do: Enum.reduce(list, acc, &types_acc/2)

    defp types_acc(tuple, acc) when is_tuple(tuple),
      do: tuple |> Tuple.to_list() |> types_acc(acc)

    defp types_acc(_, acc), do: acc

    # ------------------------------------------------------- data helpers

    @doc false
    # the tensor as an Nx.BinaryBackend tensor (downloads device data)
    def to_host(%T{data: %Nx.BinaryBackend{}} = t), do: t

    def to_host(%T{data: %__MODULE__{host: bin}} = t) when is_binary(bin),
      do: %{t | data: %Nx.BinaryBackend{state: bin}}

    def to_host(%T{data: %__MODULE__{}} = t),
      do: %{t | data: %Nx.BinaryBackend{state: download(t)}}

    def to_host(%T{} = t), do: Nx.backend_copy(t, Nx.BinaryBackend)

    @doc false
    def host_binary(%T{data: %Nx.BinaryBackend{state: bin}}), do: bin
    def host_binary(%T{data: %__MODULE__{host: bin}}) when is_binary(bin), do: bin
    def host_binary(%T{} = t), do: to_host(t) |> host_binary()

    defp download(%T{data: %__MODULE__{server: s, handle: h, ref: ref}}) do
      case Nxvk.Server.request(s, %{"cmd" => "get", "handle" => h}) do
        {:ok, _reply, bytes} ->
          # the resource stays referenced until the bytes are here
          _ = ref
          bytes

        {:error, {code, msg}} ->
          raise RuntimeError, "nxvk: get: #{code}: #{msg}"
      end
    end

    defp opts_device(opts), do: Keyword.get(opts, :device, 0)

    defp device_of(tensors) do
      Enum.find_value(tensors, 0, fn
        %T{data: %__MODULE__{device: d}} -> d
        _ -> nil
      end)
    end

    defp host(out, bin, device),
      do: %{out | data: %__MODULE__{host: bin, device: device, server: nil}}

    # scalars stay in the BEAM (they ride in the frame of the op that uses
    # them, like small constants): no round trip to make one
    defp upload(%T{type: type, shape: shape} = out, bin, device) do
      w = words(type, device)

      if (G.native?(type) or w != nil) and Nx.size(out) > 1 do
        s = server(device)

        header =
          if w,
            do: %{"cmd" => "put", "dtype" => "i32", "shape" => Tuple.to_list(shape) ++ [w]},
            else: %{"cmd" => "put", "dtype" => G.dtype(type), "shape" => Tuple.to_list(shape)}

        case Nxvk.Server.request(s, header, bin, gc: true) do
          {:ok, reply, _} ->
            h = reply["handle"]

            %{
              out
              | data: %__MODULE__{
                  server: s,
                  handle: h,
                  ref: reply[:gc][h],
                  device: device,
                  words: w
                }
            }

          {:error, {code, _}} when code in [:unsupported_dtype, :too_large, :alloc_failed] ->
            host(out, bin, device)

          {:error, {code, msg}} ->
            raise RuntimeError, "nxvk: put: #{code}: #{msg}"
        end
      else
        host(out, bin, device)
      end
    end

    # ------------------------------------------------- creation, transfer

    @impl true
    def init(opts) do
      case Keyword.validate(opts, device: 0) do
        {:ok, opts} -> opts
        {:error, bad} -> raise ArgumentError, "Nxvk.Backend: unknown options #{inspect(bad)}"
      end
    end

    @impl true
    def constant(out, number, opts) do
      count(:constant, :native, opts_device(opts))
      %{data: %{state: bin}} = Nx.BinaryBackend.constant(out, number, [])
      # small constants (the scalars of Nx.add(t, 1.0)) ride in the frame of
      # the op that uses them; larger ones go to the device now
      if Nx.size(out) <= @small_constant,
        do: host(out, bin, opts_device(opts)),
        else: upload(out, bin, opts_device(opts))
    end

    @impl true
    def from_binary(out, binary, opts) do
      count(:from_binary, :native, opts_device(opts))
      upload(out, IO.iodata_to_binary(binary), opts_device(opts))
    end

    @impl true
    def to_binary(%T{type: {_, bits}} = t, limit) do
      count(:to_binary, :native, device_of([t]))
      bin = host_binary(t)
      bytes = limit * div(bits, 8)
      if byte_size(bin) <= bytes, do: bin, else: binary_part(bin, 0, bytes)
    end

    @impl true
    def inspect(t, inspect_opts) do
      count(:inspect, :native, device_of([t]))
      limit = inspect_opts.limit
      bin = host_binary(t)
      {_, bits} = t.type

      bin =
        if limit == :infinity or byte_size(bin) <= (limit + 1) * div(bits, 8),
          do: bin,
          else: binary_part(bin, 0, (limit + 1) * div(bits, 8))

      Nx.Backend.inspect(t, bin, inspect_opts)
    end

    @impl true
    def backend_copy(t, backend, opts) do
      count(:backend_copy, :native, device_of([t]))
      transfer(t, backend, opts)
    end

    @impl true
    def backend_transfer(t, backend, opts) do
      count(:backend_transfer, :native, device_of([t]))
      result = transfer(t, backend, opts)
      if result.data != t.data, do: release(t)
      result
    end

    defp transfer(%T{data: %__MODULE__{device: d}} = t, __MODULE__, opts) do
      if opts_device(opts) == d, do: t, else: upload(t, host_binary(t), opts_device(opts))
    end

    defp transfer(t, Nx.Tensor, _opts), do: t
    defp transfer(t, backend, opts), do: backend.from_binary(t, host_binary(t), opts)

    @impl true
    def backend_deallocate(t) do
      count(:backend_deallocate, :native, device_of([t]))
      release(t)
    end

    defp release(%T{data: %__MODULE__{handle: h, ref: ref, server: s}}) when is_integer(h) do
      if ref == nil or Nxvk.GC.release(ref) == :ok do
        case Nxvk.Server.request(s, %{"cmd" => "free", "handle" => h}) do
          {:ok, _, _} -> :ok
          _ -> :already_deallocated
        end
      else
        :already_deallocated
      end
    end

    defp release(_), do: :ok

    # ------------------------------------------------------- native path

    # runs fun.(graph) -> {graph, value}; the value becomes out.  When the
    # port refuses (a dtype or size it does not take), falls back.
    defp native(name, out, inputs, fallback_args, fun) do
      device = device_of(inputs)
      s = server(device)
      {g, v} = fun.(new_graph(s, device))

      case G.run(g, [v]) do
        {:ok, [%{"handle" => h, "dtype" => dt} = o]} ->
          count(name, :native, device)
          t = %{out | data: %__MODULE__{server: s, handle: h, ref: o[:ref], device: device}}

          if G.type_of(dt) == out.type,
            do: t,
            else: raise("nxvk: #{name} gave #{dt} for #{inspect(out.type)}")

        {:error, {code, _}}
        when code in [:unsupported_dtype, :unsupported, :too_large, :bad_attr] ->
          fallback(name, fallback_args)

        {:error, {code, msg}} ->
          raise RuntimeError, "nxvk: #{name}: #{code}: #{msg}"
      end
    end

    # as native/5, for a result held as words (see words/1)
    defp native_words(name, out, inputs, fallback_args, fun) do
      device = device_of(inputs)
      s = server(device)
      w = words(out.type, device)
      {g, v} = fun.(new_graph(s, device), w)

      case G.run(g, [v]) do
        {:ok, [%{"handle" => h, "dtype" => "i32", "shape" => shape} = o]} ->
          ^shape = Tuple.to_list(out.shape) ++ [w]
          count(name, :native, device)
          %{out | data: %__MODULE__{server: s, handle: h, ref: o[:ref], device: device, words: w}}

        {:error, {code, _}}
        when code in [:unsupported_dtype, :unsupported, :too_large, :bad_attr] ->
          fallback(name, fallback_args)

        {:error, {code, msg}} ->
          raise RuntimeError, "nxvk: #{name}: #{code}: #{msg}"
      end
    end

    # every tensor of the same words-held type as out (on their device)
    defp words?(out, tensors) do
      d = device_of(tensors)
      words(out.type, d) != nil and Enum.all?(tensors, &(&1.type == out.type))
    end

    # cholesky is optional in Nx.Backend (Nx.BinaryBackend has none): Nx's
    # own definition, as Nx runs it for a backend without the callback
    defp fallback(:cholesky, [out, t]) do
      count(:cholesky, :fallback, device_of([t]), types_of([out, t]))
      Nx.LinAlg.Cholesky.cholesky(t)
    end

    # callbacks Nx.BinaryBackend does not define (Nx composes them: the
    # scans, top_k): Nx's own function on the host copy, the result uploaded
    defp fallback(name, {:host, t, fun}) do
      device = device_of([t])
      count(name, :fallback, device, types_of(t))
      previous = Nx.default_backend(Nx.BinaryBackend)

      result =
        try do
          fun.(to_host_deep(t))
        after
          Nx.default_backend(previous)
        end

      from_host_deep(result, device)
    end

    defp fallback(name, args) do
      device = device_of(Enum.filter(args, &match?(%T{}, &1)))
      count(name, :fallback, device, types_of(args))
      # the first argument is the result's template (or a tuple of them):
      # its data, if any, is not read
      [out | rest] = args
      # functions the op calls back (map, reduce, window_reduce, conv's inner
      # steps) make their constants on the default backend: the binary one,
      # while the fallback runs
      previous = Nx.default_backend(Nx.BinaryBackend)

      result =
        try do
          apply(Nx.BinaryBackend, name, [out | Enum.map(rest, &to_host_deep/1)])
        after
          Nx.default_backend(previous)
        end

      case result do
        %Stream{} -> Stream.map(result, &from_host_deep(&1, device))
        _ -> from_host_deep(result, device)
      end
    end

    defp to_host_deep(%T{} = t), do: to_host(t)
    defp to_host_deep(list) when is_list(list), do: Enum.map(list, &to_host_deep/1)

    defp to_host_deep(tuple) when is_tuple(tuple),
      do: tuple |> Tuple.to_list() |> Enum.map(&to_host_deep/1) |> List.to_tuple()

    defp to_host_deep(other), do: other

    defp from_host_deep(%T{data: %Nx.BinaryBackend{state: bin}} = t, device),
      do: upload(t, bin, device)

    defp from_host_deep(list, device) when is_list(list),
      do: Enum.map(list, &from_host_deep(&1, device))

    defp from_host_deep(tuple, device) when is_tuple(tuple),
      do: tuple |> Tuple.to_list() |> Enum.map(&from_host_deep(&1, device)) |> List.to_tuple()

    defp from_host_deep(other, _device), do: other

    # f16 f32 f64 and bf16
    defp float?({k, _}) when k in [:f, :bf], do: true
    defp float?(_), do: false

    # every type stored as itself on device d
    defp nat?(types, d) do
      int64 = Enum.any?(types, &int64_type?/1) and int64?(d)
      Enum.all?(types, &G.native?(&1, int64))
    end

    # ----------------------------------------------------- element-wise

    @arith %{add: "add", subtract: "subtract", multiply: "multiply", max: "max", min: "min"}
    @float_only %{divide: "divide", pow: "pow", atan2: "atan2"}
    @compare ~w(equal not_equal less less_equal greater greater_equal)a

    for {name, op} <- @arith do
      @impl true
      def unquote(name)(out, a, b) do
        cond do
          # max/min of a u64 and a signed value compare exactly in Nx
          exact_compare?(unquote(name)) and u64_vs_signed?(a, b) and
              nat?([out.type], device_of([a, b])) ->
            u64_vs_signed_minmax(unquote(name), out, a, b)

          nat?([out.type], device_of([a, b])) ->
            binary_native(unquote(name), unquote(op), out, a, b, out.type)

          multiply?(unquote(name)) and int64_type?(out.type) and int64_operands?([a, b]) ->
            native_words(:multiply, out, [a, b], [out, a, b], fn g, 2 ->
              {g, alo, ahi} = G.int64_words(g, a)
              {g, blo, bhi} = G.int64_words(g, b)
              {g, r} = G.int64_multiply(g, {alo, ahi}, {blo, bhi})
              broadcast_to(g, r, %{out | shape: Tuple.append(out.shape, 2)})
            end)

          addsub?(unquote(name)) and int64_type?(out.type) and int64_operands?([a, b]) ->
            native_words(unquote(name), out, [a, b], [out, a, b], fn g, 2 ->
              {g, alo, ahi} = G.int64_words(g, a)
              {g, blo, bhi} = G.int64_words(g, b)
              {g, r} = G.int64_addsub(g, unquote(op), {alo, ahi}, {blo, bhi})
              broadcast_to(g, r, %{out | shape: Tuple.append(out.shape, 2)})
            end)

          true ->
            fallback(unquote(name), [out, a, b])
        end
      end
    end

    defp addsub?(name), do: name in [:add, :subtract]
    defp exact_compare?(name), do: name in [:max, :min]
    defp multiply?(name), do: name == :multiply

    defp int64_type?({k, 64}) when k in [:s, :u], do: true
    defp int64_type?(_), do: false

    # 64-bit integer operands: s64/u64, or s32/u8 (extended); both of one
    # signedness when both are 64-bit
    defp int64_operands?(ts) do
      Enum.all?(ts, &(int64_type?(&1.type) or &1.type in [{:s, 32}, {:u, 8}])) and
        length(Enum.uniq(for %{type: {k, 64}} <- ts, do: k)) <= 1
    end

    for {name, op} <- @float_only do
      @impl true
      def unquote(name)(out, a, b) do
        cond do
          nat?([out.type], device_of([a, b])) and float?(out.type) ->
            binary_native(unquote(name), unquote(op), out, a, b, out.type)

          pow?(unquote(name)) and nat?([out.type], device_of([a, b])) and int_type?(out.type) ->
            int_pow(out, a, b)

          true ->
            fallback(unquote(name), [out, a, b])
        end
      end
    end

    defp pow?(name), do: name == :pow

    # remainder: C's fmod for floats (exact, as Erlang's :math.fmod), the
    # sign of the dividend for integers (as rem/2); a zero divisor, where
    # Nx raises, gives 0 for integers and NaN for floats (nxvk-run(1), OPS)
    @impl true
    def remainder(out, a, b) do
      if nat?([out.type], device_of([a, b])),
        do: binary_native(:remainder, "remainder", out, a, b, out.type),
        else: fallback(:remainder, [out, a, b])
    end

    # Integer pow as Nx's (Integer.pow, the result wrapped to the type):
    # square and multiply over the exponent's bits, modulo 2^bits like the
    # wrapped exact power.  An exponent held in the BEAM (a number, a small
    # constant) sets how many bits to walk, and a negative one raises the
    # ArithmeticError Nx.BinaryBackend raises (Integer.pow's); an exponent
    # on the device takes every bit of the type (a negative exponent, which
    # Nx leaves undefined for other backends, gives some power of the base).
    defp int_pow(out, a, b) do
      {_, bits} = out.type

      walk =
        case b do
          %T{data: %__MODULE__{host: bin}} when is_binary(bin) -> exponent_bits(b)
          %T{data: %Nx.BinaryBackend{}} -> exponent_bits(b)
          _ -> bits
        end

      if walk == :negative do
        # Integer.pow/2 with a negative exponent, as Nx.BinaryBackend calls it
        raise ArithmeticError
      else
        native(:pow, out, [a, b], [out, a, b], fn g ->
          {g, x} = G.input(g, a, out.type)
          {g, y} = G.input(g, b, out.type)
          {g, one} = G.scalar(g, 1, out.type)
          {g, zero} = G.scalar(g, 0, out.type)

          {g, r, _base} =
            Enum.reduce(0..(walk - 1)//1, {g, one, x}, fn i, {g, r, base} ->
              {g, k} = G.scalar(g, i, out.type)
              {g, bit} = G.op(g, "right_shift", [y, k])
              {g, bit} = G.op(g, "bitwise_and", [bit, one])
              {g, set} = G.op(g, "not_equal", [bit, zero])
              {g, m} = G.op(g, "multiply", [r, base])
              {g, r} = G.op(g, "select", [set, m, r])
              {g, base} = if i < walk - 1, do: G.op(g, "multiply", [base, base]), else: {g, base}
              {g, r, base}
            end)

          broadcast_to(g, r, out)
        end)
      end
    end

    # bits of the largest exponent held in the BEAM, :negative if any is
    defp exponent_bits(%T{} = b) do
      list = b |> to_host() |> Nx.to_flat_list()

      if Enum.any?(list, &(&1 < 0)),
        do: :negative,
        else: list |> Enum.max(fn -> 0 end) |> Integer.digits(2) |> length()
    end

    for name <- @compare do
      @impl true
      def unquote(name)(out, a, b) do
        type = Nx.Type.merge(a.type, b.type)

        cond do
          # Nx compares the values exactly; in the merged type (s64) a u64
          # above 2^63 would read negative
          u64_vs_signed?(a, b) and nat?([type], device_of([a, b])) ->
            u64_vs_signed(unquote(name), out, a, b)

          nat?([type], device_of([a, b])) ->
            binary_native(unquote(name), unquote(Atom.to_string(name)), out, a, b, type)

          int64_type?(type) and int64_operands?([a, b]) and
              not (type == {:u, 64} and Enum.any?([a, b], &(&1.type == {:s, 32}))) ->
            native(unquote(name), out, [a, b], [out, a, b], fn g ->
              {g, alo, ahi} = G.int64_words(g, a)
              {g, blo, bhi} = G.int64_words(g, b)
              unsigned = type == {:u, 64}

              {g, r} =
                G.int64_compare(
                  g,
                  unquote(Atom.to_string(name)),
                  unsigned,
                  {alo, ahi},
                  {blo, bhi}
                )

              {g, r} =
                G.op(g, "reshape", [r], %{"shape" => broadcast_shape(a.shape, b.shape) ++ [1]})

              {g, r} = broadcast_to(g, r, %{out | shape: Tuple.append(out.shape, 1)})
              G.op(g, "reshape", [r], %{"shape" => Tuple.to_list(out.shape)})
            end)

          true ->
            fallback(unquote(name), [out, a, b])
        end
      end
    end

    defp u64_vs_signed?(a, b) do
      signed? = &match?({:s, _}, &1.type)
      (a.type == {:u, 64} and signed?.(b)) or (b.type == {:u, 64} and signed?.(a))
    end

    # compares as u64 where the signed side is not negative; where it is,
    # the u64 side is the greater
    defp u64_vs_signed(name, out, a, b) do
      native(name, out, [a, b], [out, a, b], fn g ->
        {u, s, swapped} = if a.type == {:u, 64}, do: {a, b, false}, else: {b, a, true}
        {g, uv} = G.input(g, u, {:u, 64})
        {g, sv} = G.input(g, s, {:s, 64})
        {g, su} = G.cast(g, sv, {:s, 64}, {:u, 64})
        {g, zero} = G.scalar(g, 0, {:s, 64})
        {g, neg} = G.op(g, "less", [sv, zero])
        {g, r} = G.op(g, Atom.to_string(name), if(swapped, do: [su, uv], else: [uv, su]))
        # a negative signed side: u > s
        greater =
          if swapped,
            do: [:less, :less_equal, :not_equal],
            else: [:greater, :greater_equal, :not_equal]

        {g, k} = G.scalar(g, if(name in greater, do: 1, else: 0), {:u, 8})
        {g, r} = G.op(g, "select", [neg, k, r])
        broadcast_to(g, r, out)
      end)
    end

    # max/min of a u64 and a signed value, exactly as Nx (the result
    # written in the merged type, s64, wrapping): a negative signed side is
    # the smaller; otherwise both compare as u64
    defp u64_vs_signed_minmax(name, out, a, b) do
      native(name, out, [a, b], [out, a, b], fn g ->
        {u, s} = if a.type == {:u, 64}, do: {a, b}, else: {b, a}
        {g, uv} = G.input(g, u, {:u, 64})
        {g, sv} = G.input(g, s, {:s, 64})
        {g, su} = G.cast(g, sv, {:s, 64}, {:u, 64})
        {g, zero} = G.scalar(g, 0, {:s, 64})
        {g, neg} = G.op(g, "less", [sv, zero])
        {g, m} = G.op(g, Atom.to_string(name), [uv, su])
        {g, m} = G.cast(g, m, {:u, 64}, out.type)
        {g, uo} = G.cast(g, uv, {:u, 64}, out.type)
        {g, so} = G.cast(g, sv, {:s, 64}, out.type)
        {g, r} = G.op(g, "select", [neg, if(name == :max, do: uo, else: so), m])
        broadcast_to(g, r, out)
      end)
    end

    defp broadcast_shape(sa, sb) do
      {la, lb} = {Tuple.to_list(sa), Tuple.to_list(sb)}
      n = max(length(la), length(lb))
      pad = fn l -> List.duplicate(1, n - length(l)) ++ l end
      Enum.zip_with(pad.(la), pad.(lb), &max/2)
    end

    defp binary_native(name, op, out, a, b, type) do
      native(name, out, [a, b], [out, a, b], fn g ->
        {g, x} = G.input(g, a, type)
        {g, y} = G.input(g, b, type)
        G.op(g, op, [x, y])
      end)
    end

    @float_unary ~w(exp log sqrt rsqrt sigmoid tanh sin cos expm1 log1p erf
                    tan asin acos atan sinh cosh asinh acosh atanh cbrt erfc erf_inv)a
    for name <- @float_unary do
      @impl true
      def unquote(name)(out, t) do
        if nat?([out.type], device_of([t])) and float?(out.type),
          do: unary_native(unquote(name), unquote(Atom.to_string(name)), out, t),
          else: fallback(unquote(name), [out, t])
      end
    end

    # floats and signed integers: the engine's ops (IEEE: sign keeps NaN and
    # gives -1 for -inf, where Nx.BinaryBackend gives 1.0, its atoms compared
    # with numbers; abs and sign of -0.0 give 0.0, where it keeps -0.0);
    # unsigned: abs is the value itself, negate wraps (0 - x) as Nx, sign is
    # min(x, 1)
    for name <- ~w(abs negate sign)a do
      @impl true
      def unquote(name)(out, t) do
        d = device_of([t])

        cond do
          match?({k, _} when k in [:f, :bf, :s], out.type) and t.type == out.type and
              nat?([out.type], d) ->
            unary_native(unquote(name), unquote(Atom.to_string(name)), out, t)

          abs?(unquote(name)) and match?({:u, _}, out.type) and t.type == out.type and
              match?(%T{data: %__MODULE__{}}, t) ->
            count(:abs, :native, d)
            %{out | data: t.data}

          match?({:u, _}, out.type) and t.type == out.type and nat?([out.type], d) ->
            native(unquote(name), out, [t], [out, t], fn g ->
              {g, x} = G.input(g, t, out.type)

              if negate?(unquote(name)) do
                {g, z} = G.scalar(g, 0, out.type)
                G.op(g, "subtract", [z, x])
              else
                {g, one} = G.scalar(g, 1, out.type)
                G.op(g, "min", [x, one])
              end
            end)

          true ->
            fallback(unquote(name), [out, t])
        end
      end
    end

    defp abs?(name), do: name == :abs
    defp negate?(name), do: name == :negate

    for name <- ~w(floor ceil round)a do
      @impl true
      def unquote(name)(out, t) do
        cond do
          nat?([out.type], device_of([t])) and float?(out.type) and t.type == out.type ->
            unary_native(unquote(name), unquote(Atom.to_string(name)), out, t)

          # integers are whole already
          not float?(out.type) and match?(%T{data: %__MODULE__{}}, t) and t.type == out.type ->
            count(unquote(name), :native, device_of([t]))
            %{out | data: t.data}

          true ->
            fallback(unquote(name), [out, t])
        end
      end
    end

    defp unary_native(name, op, out, t) do
      native(name, out, [t], [out, t], fn g ->
        {g, x} = G.input(g, t, out.type)
        G.op(g, op, [x])
      end)
    end

    # ------------------------------------------- integer and logical ops

    # integer binary ops on the engine's integer types, in the result type
    # (the engine's shifts give 0 or the sign fill for counts outside
    # 0..width-1, where Nx raises on negative counts: nxvk-run(1), OPS)
    @int_binary ~w(bitwise_and bitwise_or bitwise_xor left_shift right_shift quotient)a
    for name <- @int_binary do
      @impl true
      def unquote(name)(out, a, b) do
        cond do
          # Nx raises on a negative shift count: Nx.BinaryBackend's message,
          # naming the first negative count
          shift?(unquote(name)) and negative_count?(b) ->
            raise ArgumentError,
                  "cannot #{shift_word(unquote(name))} shift by #{first_negative(b)}"

          nat?([out.type], device_of([a, b])) and not float?(out.type) ->
            binary_native(unquote(name), unquote(Atom.to_string(name)), out, a, b, out.type)

          # s64/u64 held as words: and/or/xor word by word
          wordwise?(unquote(name)) and int64_type?(out.type) and int64_operands?([a, b]) ->
            native_words(unquote(name), out, [a, b], [out, a, b], fn g, 2 ->
              {g, alo, ahi} = G.int64_words(g, a)
              {g, blo, bhi} = G.int64_words(g, b)
              {g, lo} = G.op(g, unquote(Atom.to_string(name)), [alo, blo])
              {g, hi} = G.op(g, unquote(Atom.to_string(name)), [ahi, bhi])
              {g, r} = G.op(g, "concatenate", [lo, hi], %{"axis" => tuple_size(out.shape)})
              broadcast_to(g, r, %{out | shape: Tuple.append(out.shape, 2)})
            end)

          true ->
            fallback(unquote(name), [out, a, b])
        end
      end
    end

    defp shift?(name), do: name in [:left_shift, :right_shift]
    defp shift_word(:left_shift), do: "left"
    defp shift_word(:right_shift), do: "right"

    # the first negative element in order (argmax of b < 0 finds the first
    # true), one number back from the device
    defp first_negative(b) do
      flat = Nx.reshape(b, {Nx.size(b)})
      i = flat |> Nx.less(0) |> Nx.argmax()
      flat |> Nx.take(i) |> Nx.to_number()
    end

    # one byte back from the device: is any count negative?
    defp negative_count?(%T{type: {:s, _}} = b), do: Nx.to_number(Nx.any(Nx.less(b, 0))) == 1
    defp negative_count?(_), do: false

    defp wordwise?(name), do: name in [:bitwise_and, :bitwise_or, :bitwise_xor, :bitwise_not]

    for name <- ~w(bitwise_not count_leading_zeros population_count)a do
      @impl true
      def unquote(name)(out, t) do
        cond do
          nat?([out.type], device_of([t])) and not float?(out.type) and t.type == out.type ->
            unary_native(unquote(name), unquote(Atom.to_string(name)), out, t)

          wordwise?(unquote(name)) and words(out.type, device_of([t])) == 2 and words?(out, [t]) ->
            native_words(:bitwise_not, out, [t], [out, t], fn g, 2 ->
              {g, x} = G.word_input(g, t, 2)
              G.op(g, "bitwise_not", [x])
            end)

          true ->
            fallback(unquote(name), [out, t])
        end
      end
    end

    # logical ops of any native type (nonzero is true, NaN too), giving u8
    for name <- ~w(logical_and logical_or logical_xor)a do
      @impl true
      def unquote(name)(out, a, b) do
        type = Nx.Type.merge(a.type, b.type)

        if nat?([type], device_of([a, b])),
          do: binary_native(unquote(name), unquote(Atom.to_string(name)), out, a, b, type),
          else: fallback(unquote(name), [out, a, b])
      end
    end

    @impl true
    def logical_not(out, t) do
      if nat?([t.type], device_of([t])) do
        native(:logical_not, out, [t], [out, t], fn g ->
          {g, x} = G.input(g, t, t.type)
          G.op(g, "logical_not", [x])
        end)
      else
        # Nx's own definition (logical_not is optional): t == 0
        count(:logical_not, :fallback, device_of([t]), types_of([out, t]))
        Nx.equal(t, Nx.tensor(0, type: t.type, backend: Nx.BinaryBackend))
      end
    end

    for name <- ~w(is_nan is_infinity)a do
      @impl true
      def unquote(name)(out, t) do
        if nat?([t.type], device_of([t])) do
          native(unquote(name), out, [t], [out, t], fn g ->
            {g, x} = G.input(g, t, t.type)
            G.op(g, unquote(Atom.to_string(name)), [x])
          end)
        else
          fallback(unquote(name), [out, t])
        end
      end
    end

    @impl true
    def select(out, pred, on_true, on_false) do
      if words?(out, [on_true, on_false]) and
           nat?([pred.type], device_of([pred, on_true, on_false])) do
        native_words(
          :select,
          out,
          [pred, on_true, on_false],
          [out, pred, on_true, on_false],
          fn g, w ->
            {g, p} = select_mask(g, pred)

            # the mask gets a trailing axis of 1: numpy broadcasting over the words
            {g, p} = G.op(g, "reshape", [p], %{"shape" => Tuple.to_list(pred.shape) ++ [1]})
            {g, x} = G.word_input(g, on_true, w)
            {g, y} = G.word_input(g, on_false, w)
            {g, r} = G.op(g, "select", [p, x, y])
            broadcast_to(g, r, %{out | shape: Tuple.append(out.shape, w)})
          end
        )
      else
        select_native(out, pred, on_true, on_false)
      end
    end

    # select's predicate as the engine's u8 mask: nonzero is true
    defp select_mask(g, pred) do
      {g, p} = G.input(g, pred, pred.type)

      if pred.type == {:u, 8} do
        {g, p}
      else
        {g, z} = G.scalar(g, 0, pred.type)
        G.op(g, "not_equal", [p, z])
      end
    end

    defp select_native(out, pred, on_true, on_false) do
      if nat?([out.type, pred.type], device_of([pred, on_true, on_false])) do
        native(:select, out, [pred, on_true, on_false], [out, pred, on_true, on_false], fn g ->
          {g, p} = select_mask(g, pred)

          {g, x} = G.input(g, on_true, out.type)
          {g, y} = G.input(g, on_false, out.type)
          {g, r} = G.op(g, "select", [p, x, y])
          broadcast_to(g, r, out)
        end)
      else
        fallback(:select, [out, pred, on_true, on_false])
      end
    end

    @impl true
    def clip(out, t, lo, hi) do
      if nat?([out.type], device_of([t, lo, hi])) do
        native(:clip, out, [t, lo, hi], [out, t, lo, hi], fn g ->
          {g, x} = G.input(g, t, out.type)
          {g, l} = G.input(g, lo, out.type)
          {g, h} = G.input(g, hi, out.type)
          # as Nx.BinaryBackend: y = x > lo ? x : lo, then y < hi ? y : hi
          # (a NaN x gives lo, a NaN lo gives hi, a NaN hi gives NaN; lo
          # above hi gives hi)
          {g, above} = G.op(g, "greater", [x, l])
          {g, y} = G.op(g, "select", [above, x, l])
          {g, below} = G.op(g, "less", [y, h])
          G.op(g, "select", [below, y, h])
        end)
      else
        fallback(:clip, [out, t, lo, hi])
      end
    end

    # -------------------------------------------------------- reductions

    defp reduce_attrs(opts) do
      attrs = %{"keep_axes" => Keyword.get(opts, :keep_axes, false)}
      if opts[:axes], do: Map.put(attrs, "axes", opts[:axes]), else: attrs
    end

    # sum and product: floats in their own type; integers as Nx aggregates
    # them (to s64 or u64, wrapping), natively on a device with shaderInt64
    for name <- ~w(sum product)a do
      @impl true
      def unquote(name)(out, t, opts) do
        d = device_of([t])

        cond do
          nat?([out.type], d) and (float?(out.type) or int64_type?(out.type)) ->
            native(unquote(name), out, [t], [out, t, opts], fn g ->
              {g, x} = G.input(g, t, out.type)
              G.op(g, unquote(Atom.to_string(name)), [x], reduce_attrs(opts))
            end)

          # without shaderInt64: the sum on the words (16-bit limbs in f64)
          sum_words?(unquote(name), out, t) ->
            native_words(:sum, out, [t], [out, t, opts], fn g, 2 ->
              {g, lo, hi} = G.int64_words(g, t)
              G.int64_sum(g, lo, hi, t.shape, reduce_attrs(opts), out.shape)
            end)

          true ->
            fallback(unquote(name), [out, t, opts])
        end
      end
    end

    defp sum_words?(:sum, out, t),
      do: int64_type?(out.type) and int64_operands?([t]) and Nx.size(t) < 137_438_953_472

    defp sum_words?(_, _, _), do: false

    for name <- ~w(all any)a do
      @impl true
      def unquote(name)(out, t, opts) do
        if nat?([t.type], device_of([t])) do
          native(unquote(name), out, [t], [out, t, opts], fn g ->
            {g, x} = G.input(g, t, t.type)
            G.op(g, unquote(Atom.to_string(name)), [x], reduce_attrs(opts))
          end)
        else
          fallback(unquote(name), [out, t, opts])
        end
      end
    end

    # Nx's own composition (Nx.all_close's vectorized_all_close) on this
    # backend, its one-byte result held in the BEAM as a fallback's scalar
    # would be (so `Nx.all_close(a, b) == Nx.tensor(1, type: :u8)` holds,
    # as the Nx suite's assert_all_close asks)
    @impl true
    def all_close(out, a, b, opts) do
      count(:all_close, :native, device_of([a, b]))
      {atol, rtol} = {opts[:atol], opts[:rtol]}

      finite =
        Nx.less_equal(Nx.abs(Nx.subtract(a, b)), Nx.add(atol, Nx.multiply(rtol, Nx.abs(b))))

      r =
        if Nx.Type.integer?(a.type) and Nx.Type.integer?(b.type) do
          Nx.all(finite)
        else
          inf =
            Nx.select(Nx.logical_or(Nx.is_infinity(a), Nx.is_infinity(b)), Nx.equal(a, b), finite)

          if opts[:equal_nan],
            do: Nx.all(Nx.select(Nx.logical_and(Nx.is_nan(a), Nx.is_nan(b)), 1, inf)),
            else: Nx.all(inf)
        end

      host(out, Nx.to_binary(r), device_of([a, b]))
    end

    for name <- ~w(reduce_max reduce_min)a do
      @impl true
      def unquote(name)(out, t, opts) do
        if nat?([out.type], device_of([t])) and t.type == out.type do
          native(unquote(name), out, [t], [out, t, opts], fn g ->
            {g, x} = G.input(g, t, out.type)
            G.op(g, unquote(Atom.to_string(name)), [x], reduce_attrs(opts))
          end)
        else
          fallback(unquote(name), [out, t, opts])
        end
      end
    end

    # the engine's index is i32 (the element count is below 2^31): cast in
    # the same graph to Nx's type (s64 by default), or, where s64 is held as
    # words, given a zero high word
    for name <- ~w(argmax argmin)a do
      @impl true
      def unquote(name)(out, t, opts) do
        d = device_of([t])

        cond do
          # one element (a scalar, held in the BEAM): its index is 0
          Nx.size(t) == 1 and match?({k, _} when k in [:s, :u], out.type) ->
            count(unquote(name), :native, d)
            {_, bits} = out.type
            host(out, <<0::size(bits)>>, d)

          nat?([t.type], d) and Keyword.get(opts, :tie_break, :low) in [:low, :high] and
            Nx.size(t) > 1 and match?({k, _} when k in [:s, :u], out.type) and
              (nat?([out.type], d) or words(out.type, d) == 2) ->
            attrs = %{
              "keep_axes" => Keyword.get(opts, :keep_axis, false),
              "tie_break" => Atom.to_string(Keyword.get(opts, :tie_break, :low))
            }

            attrs = if opts[:axis], do: Map.put(attrs, "axes", [opts[:axis]]), else: attrs
            op = unquote(Atom.to_string(name))

            if nat?([out.type], d) do
              native(unquote(name), out, [t], [out, t, opts], fn g ->
                {g, x} = G.input(g, t, t.type)
                {g, r} = G.arg_reduce(g, op, x, t.type, attrs, t.shape, opts[:axis], out.shape)
                G.cast(g, r, {:s, 32}, out.type)
              end)
            else
              native_words(unquote(name), out, [t], [out, t, opts], fn g, 2 ->
                {g, x} = G.input(g, t, t.type)
                {g, r} = G.arg_reduce(g, op, x, t.type, attrs, t.shape, opts[:axis], out.shape)
                {g, lo} = G.op(g, "reshape", [r], %{"shape" => Tuple.to_list(out.shape) ++ [1]})
                {g, hi} = G.op(g, "subtract", [lo, lo])
                G.op(g, "concatenate", [lo, hi], %{"axis" => -1})
              end)
            end

          true ->
            fallback(unquote(name), [out, t, opts])
        end
      end
    end

    # ----------------------------------------------------------- movement

    @impl true
    def as_type(out, t) do
      d = device_of([t])

      cond do
        # as Nx converts (Nxvk.Graph.convert/7)
        nat?([out.type, t.type], d) ->
          native(:as_type, out, [t], [out, t], fn g -> G.input(g, t, out.type) end)

        # the rest are for a device without shaderInt64, s64/u64 held as words

        # 64-bit integers to s32: the low word (Nx wraps)
        int64_type?(t.type) and out.type == {:s, 32} and words(t.type, d) == 2 ->
          native(:as_type, out, [t], [out, t], fn g ->
            {g, lo, _hi} = G.int64_words(g, t)
            G.op(g, "reshape", [lo], %{"shape" => Tuple.to_list(out.shape)})
          end)

        # s32/u8 to 64-bit integers: sign or zero extended
        int64_type?(out.type) and t.type in [{:s, 32}, {:u, 8}] and words(out.type, d) == 2 ->
          native_words(:as_type, out, [t], [out, t], fn g, 2 ->
            {g, lo, hi} = G.int64_words(g, t)
            G.op(g, "concatenate", [lo, hi], %{"axis" => -1})
          end)

        # 64-bit integers to floats: hi * 2^32 + unsigned lo in f64 (rounded
        # once to double, as Erlang converts an integer), then to f32
        int64_type?(t.type) and float?(out.type) and nat?([out.type], d) and words(t.type, d) == 2 ->
          native(:as_type, out, [t], [out, t], fn g ->
            {g, lo, hi} = G.int64_words(g, t)
            {g, lo} = G.op(g, "as_type", [lo], %{"dtype" => "f64"})
            {g, hi} = G.op(g, "as_type", [hi], %{"dtype" => "f64"})
            {g, zero} = G.scalar(g, 0, {:f, 64})
            {g, two32} = G.scalar(g, 4_294_967_296.0, {:f, 64})
            # the low word is unsigned: add 2^32 where it reads negative
            {g, neg} = G.op(g, "less", [lo, zero])
            {g, fix} = G.op(g, "select", [neg, two32, zero])
            {g, ulo} = G.op(g, "add", [lo, fix])
            # u64: the high word is unsigned too
            {g, hi} =
              if t.type == {:u, 64} do
                {g, hneg} = G.op(g, "less", [hi, zero])
                {g, hfix} = G.op(g, "select", [hneg, two32, zero])
                G.op(g, "add", [hi, hfix])
              else
                {g, hi}
              end

            {g, high} = G.op(g, "multiply", [hi, two32])
            {g, v} = G.op(g, "add", [high, ulo])
            {g, v} = G.op(g, "reshape", [v], %{"shape" => Tuple.to_list(out.shape)})
            G.cast(g, v, {:f, 64}, out.type)
          end)

        true ->
          fallback(:as_type, [out, t])
      end
    end

    # the same bytes as another type of the same width: the engine's bitcast
    # (a buffer copy); a scalar held in the BEAM is its bytes already
    @impl true
    def bitcast(out, t) do
      d = device_of([t])

      cond do
        not nat?([out.type, t.type], d) ->
          fallback(:bitcast, [out, t])

        match?(%T{data: %__MODULE__{host: bin}} when is_binary(bin), t) ->
          count(:bitcast, :native, d)
          host(out, t.data.host, d)

        true ->
          native(:bitcast, out, [t], [out, t], fn g ->
            {g, x} = G.input(g, t, t.type)
            G.op(g, "bitcast", [x], %{"dtype" => G.dtype(out.type)})
          end)
      end
    end

    @impl true
    def reshape(out, t), do: reshape_to(:reshape, out, t)

    @impl true
    def squeeze(out, t, _axes), do: reshape_to(:squeeze, out, t)

    defp reshape_to(name, out, t) do
      if words?(out, [t]) do
        native_words(name, out, [t], fallback_args(name, out, t), fn g, w ->
          {g, x} = G.word_input(g, t, w)
          G.op(g, "reshape", [x], %{"shape" => Tuple.to_list(out.shape) ++ [w]})
        end)
      else
        reshape_native(name, out, t)
      end
    end

    defp fallback_args(:squeeze, out, t), do: [out, t, []]
    defp fallback_args(_, out, t), do: [out, t]

    defp reshape_native(name, out, t) do
      if nat?([t.type], device_of([t])) and t.type == out.type do
        native(name, out, [t], [out, t], fn g ->
          {g, x} = G.input(g, t, t.type)
          G.op(g, "reshape", [x], %{"shape" => Tuple.to_list(out.shape)})
        end)
      else
        fallback(name, if(name == :squeeze, do: [out, t, []], else: [out, t]))
      end
    end

    @impl true
    def transpose(out, t, axes) do
      if words?(out, [t]) do
        native_words(:transpose, out, [t], [out, t, axes], fn g, w ->
          {g, x} = G.word_input(g, t, w)
          G.op(g, "transpose", [x], %{"perm" => axes ++ [length(axes)]})
        end)
      else
        transpose_native(out, t, axes)
      end
    end

    @impl true
    def reverse(out, t, axes) do
      cond do
        words?(out, [t]) ->
          native_words(:reverse, out, [t], [out, t, axes], fn g, w ->
            {g, x} = G.word_input(g, t, w)
            G.op(g, "reverse", [x], %{"axes" => axes})
          end)

        nat?([t.type], device_of([t])) ->
          native(:reverse, out, [t], [out, t, axes], fn g ->
            {g, x} = G.input(g, t, t.type)
            G.op(g, "reverse", [x], %{"axes" => axes})
          end)

        true ->
          fallback(:reverse, [out, t, axes])
      end
    end

    defp transpose_native(out, t, axes) do
      if nat?([t.type], device_of([t])) do
        native(:transpose, out, [t], [out, t, axes], fn g ->
          {g, x} = G.input(g, t, t.type)
          G.op(g, "transpose", [x], %{"perm" => axes})
        end)
      else
        fallback(:transpose, [out, t, axes])
      end
    end

    @impl true
    def broadcast(out, t, shape, axes) do
      if words?(out, [t]) and axes == Enum.sort(axes) do
        native_words(:broadcast, out, [t], [out, t, shape, axes], fn g, w ->
          {g, x} = G.word_input(g, t, w)
          dims = Tuple.to_list(t.shape)
          lifted = for i <- 0..(tuple_size(shape) - 1)//1, do: lift(i, axes, dims)
          {g, r} = G.op(g, "reshape", [x], %{"shape" => lifted ++ [w]})
          broadcast_to(g, r, %{out | shape: Tuple.append(out.shape, w)})
        end)
      else
        broadcast_native(out, t, shape, axes)
      end
    end

    defp broadcast_native(out, t, shape, axes) do
      if nat?([t.type], device_of([t])) and t.type == out.type and
           axes == Enum.uniq(Enum.sort(axes)) do
        native(:broadcast, out, [t], [out, t, shape, axes], fn g ->
          {g, x} = G.input(g, t, t.type)
          G.op(g, "broadcast", [x], %{"shape" => Tuple.to_list(shape), "axes" => axes})
        end)
      else
        fallback(:broadcast, [out, t, shape, axes])
      end
    end

    defp lift(i, axes, dims) do
      case Enum.find_index(axes, &(&1 == i)) do
        nil -> 1
        j -> Enum.at(dims, j)
      end
    end

    # the port has no broadcast op: select over a full-shaped all-true mask
    # broadcasts exactly (no arithmetic touches the values)
    defp broadcast_to(g, v, out) do
      shape = Tuple.to_list(out.shape)
      {g, i} = G.op(g, "iota", [], %{"shape" => shape, "dtype" => "u8"})
      {g, m} = G.op(g, "equal", [i, i])
      G.op(g, "select", [m, v, v])
    end

    @impl true
    def slice(out, t, starts, lengths, strides) do
      cond do
        words?(out, [t]) and Enum.all?(starts, &is_integer/1) ->
          native_words(:slice, out, [t], [out, t, starts, lengths, strides], fn g, w ->
            {g, x} = G.word_input(g, t, w)
            # the port's length counts output elements (Nx's spans the input)
            attrs = %{
              "start" => starts ++ [0],
              "length" => Tuple.to_list(out.shape) ++ [w],
              "stride" => strides ++ [1]
            }

            G.op(g, "slice", [x], attrs)
          end)

        true ->
          slice_native(out, t, starts, lengths, strides)
      end
    end

    defp slice_native(out, t, starts, lengths, strides) do
      cond do
        nat?([t.type], device_of([t])) and Enum.all?(starts, &is_integer/1) ->
          native(:slice, out, [t], [out, t, starts, lengths, strides], fn g ->
            {g, x} = G.input(g, t, t.type)
            # the port's length counts output elements (Nx's spans the input)
            G.op(g, "slice", [x], %{
              "start" => starts,
              "length" => Tuple.to_list(out.shape),
              "stride" => strides
            })
          end)

        nat?([t.type], device_of([t])) and starts_ok?(starts, device_of([t])) ->
          # starts given as tensors: dynamic_slice clamps them as Nx does; its
          # length spans the input, as Nx's lengths
          native(
            :slice,
            out,
            [t | tensors_of(starts)],
            [out, t, starts, lengths, strides],
            fn g ->
              {g, x} = G.input(g, t, t.type)
              {g, st} = starts_input(g, starts)
              G.op(g, "dynamic_slice", [x, st], %{"length" => lengths, "stride" => strides})
            end
          )

        true ->
          fallback(:slice, [out, t, starts, lengths, strides])
      end
    end

    # ------------------------------------------------- shape and indexing
    #
    # Out-of-range indices: gather, take and take_along_axis clamp each index
    # into 0..dim-1, and indexed_add / indexed_put drop an update whose index
    # is out of range (as EXLA; Nx.BinaryBackend raises instead).

    defp int_type?({k, _}) when k in [:s, :u], do: true
    defp int_type?(_), do: false

    # an index operand the device takes: an integer tensor of a stored type
    defp index_ok?(%T{type: ty}, d), do: int_type?(ty) and nat?([ty], d)

    defp tensors_of(list), do: for(%T{} = t <- list, do: t)

    # start indices: integers, or scalar integer tensors of a stored type
    defp starts_ok?(starts, d) do
      Enum.all?(starts, fn
        s when is_integer(s) -> true
        %T{shape: {}} = s -> index_ok?(s, d)
        _ -> false
      end)
    end

    # the start indices as one [rank] tensor of the widest index type they
    # hold (integers as s32 when they fit), so nothing wraps before the
    # engine clamps
    defp starts_input(g, starts) do
      ty =
        starts
        |> Enum.map(fn
          s when is_integer(s) ->
            if s >= -2_147_483_648 and s <= 2_147_483_647, do: {:s, 32}, else: {:s, 64}

          %T{type: ty} ->
            ty
        end)
        |> Enum.reduce(&Nx.Type.merge/2)

      ty = if G.native?(ty, g.int64), do: ty, else: {:s, 32}

      {g, vs} =
        Enum.reduce(starts, {g, []}, fn s, {g, vs} ->
          {g, v} = if is_integer(s), do: G.scalar(g, s, ty), else: G.input(g, s, ty)
          {g, v} = G.op(g, "reshape", [v], %{"shape" => [1]})
          {g, [v | vs]}
        end)

      case Enum.reverse(vs) do
        [v] -> {g, v}
        vs -> G.op(g, "concatenate", vs, %{"axis" => 0})
      end
    end

    @impl true
    def pad(out, t, pad_value, config) do
      d = device_of([t, pad_value])

      cond do
        not nat?([out.type], d) ->
          fallback(:pad, [out, t, pad_value, config])

        # an input without elements: every element of the result is the pad
        # value (Nx sizes an empty axis with interior padding as low + high
        # - interior; Nx.BinaryBackend cannot pad it)
        Nx.size(out) == 0 ->
          empty(:pad, out, d)

        Nx.size(t) == 0 ->
          native(:pad, out, [t, pad_value], [out, t, pad_value, config], fn g ->
            {g, v} = G.input(g, pad_value, out.type)
            {g, v} = G.op(g, "reshape", [v], %{"shape" => []})
            broadcast_to(g, v, out)
          end)

        true ->
          pad_native(out, t, pad_value, config)
      end
    end

    defp pad_native(out, t, pad_value, config) do
      native(:pad, out, [t, pad_value], [out, t, pad_value, config], fn g ->
        {g, x} = G.input(g, t, out.type)
        {g, v} = G.input(g, pad_value, out.type)
        {g, v} = G.op(g, "reshape", [v], %{"shape" => []})
        lows = for {lo, _, _} <- config, do: lo
        highs = for {_, hi, _} <- config, do: hi
        inner = for {_, _, i} <- config, do: i
        G.op(g, "pad", [x, v], %{"low" => lows, "high" => highs, "interior" => inner})
      end)
    end

    # a result without elements, held in the BEAM as a scalar is: nothing
    # to run on the device
    defp empty(name, out, device) do
      count(name, :native, device)
      host(out, <<>>, device)
    end

    @impl true
    def put_slice(out, t, starts, slice) do
      d = device_of([t, slice])

      if nat?([out.type], d) and starts_ok?(starts, d) do
        native(:put_slice, out, [t, slice | tensors_of(starts)], [out, t, starts, slice], fn g ->
          {g, x} = G.input(g, t, out.type)
          {g, u} = G.input(g, slice, out.type)
          {g, st} = starts_input(g, starts)
          G.op(g, "put_slice", [x, u, st])
        end)
      else
        fallback(:put_slice, [out, t, starts, slice])
      end
    end

    @impl true
    def gather(out, t, idx, opts) do
      d = device_of([t, idx])

      if nat?([t.type], d) and index_ok?(idx, d) do
        native(:gather, out, [t, idx], [out, t, idx, opts], fn g ->
          {g, x} = G.input(g, t, t.type)
          {g, i} = G.input(g, idx, idx.type)
          G.op(g, "gather", [x, i], %{"axes" => opts[:axes]})
        end)
      else
        fallback(:gather, [out, t, idx, opts])
      end
    end

    for name <- [:take, :take_along_axis] do
      @impl true
      def unquote(name)(out, t, idx, axis) do
        d = device_of([t, idx])

        if nat?([t.type], d) and index_ok?(idx, d) do
          native(unquote(name), out, [t, idx], [out, t, idx, axis], fn g ->
            {g, x} = G.input(g, t, t.type)
            {g, i} = G.input(g, idx, idx.type)
            G.op(g, unquote(Atom.to_string(name)), [x, i], %{"axis" => axis})
          end)
        else
          fallback(unquote(name), [out, t, idx, axis])
        end
      end
    end

    # Updates smaller than the target's other axes: Nx.BinaryBackend
    # (0.7.3) moves the indexed axes to the front and writes each update's
    # elements contiguously from the start of its row of the other axes
    # (flattened), not as a window.  The same natively: the target
    # transposed to axes ++ the rest, the rest flattened to one axis of R
    # elements, each update flattened to u <= R elements written as a window
    # at 0 of that axis, then the shape and order restored.
    for name <- [:indexed_add, :indexed_put] do
      @impl true
      def unquote(name)(out, target, idx, updates, opts) do
        rank = tuple_size(target.shape)
        axes = opts[:axes] || Enum.to_list(0..(elem(idx.shape, 1) - 1)//1)
        others = Enum.to_list(0..(rank - 1)//1) -- axes
        rest = for a <- others, do: elem(target.shape, a)
        full = Tuple.to_list(updates.shape) |> tl() == rest
        op = unquote(Atom.to_string(name))

        d = device_of([target, idx, updates])

        cond do
          not (nat?([out.type], d) and index_ok?(idx, d)) ->
            fallback(unquote(name), [out, target, idx, updates, opts])

          full ->
            native(
              unquote(name),
              out,
              [target, idx, updates],
              [out, target, idx, updates, opts],
              fn g ->
                {g, x} = G.input(g, target, out.type)
                {g, i} = G.input(g, idx, idx.type)
                {g, u} = G.input(g, updates, out.type)
                G.op(g, op, [x, i, u], %{"axes" => axes})
              end
            )

          true ->
            native(
              unquote(name),
              out,
              [target, idx, updates],
              [out, target, idx, updates, opts],
              fn g ->
                perm = axes ++ others
                lead = for a <- axes, do: elem(target.shape, a)
                n = elem(updates.shape, 0)
                {g, x} = G.input(g, target, out.type)
                {g, x} = permute(g, x, perm, rank)
                {g, x} = G.op(g, "reshape", [x], %{"shape" => lead ++ [Enum.product(rest)]})
                {g, i} = G.input(g, idx, idx.type)
                {g, u} = G.input(g, updates, out.type)

                {g, u} =
                  G.op(g, "reshape", [u], %{"shape" => [n, div(Nx.size(updates), max(n, 1))]})

                {g, r} =
                  G.op(g, op, [x, i, u], %{"axes" => Enum.to_list(0..(length(axes) - 1)//1)})

                {g, r} = G.op(g, "reshape", [r], %{"shape" => lead ++ rest})
                permute(g, r, inverse_permutation(perm), rank)
              end
            )
        end
      end
    end

    defp inverse_permutation(perm),
      do: perm |> Enum.with_index() |> Enum.sort() |> Enum.map(fn {_, i} -> i end)

    # batches of axis 0, each a slice on the device (the last, with
    # leftover: :repeat, the tail and the head concatenated), made as the
    # stream is read
    @impl true
    def to_batched(out, t, opts) do
      batch = elem(out.shape, 0)
      size = elem(t.shape, 0)
      full = div(size, batch)
      left = rem(size, batch)
      last = if left != 0 and opts[:leftover] == :repeat, do: full, else: full - 1
      count(:to_batched, :native, device_of([t]))
      rank = tuple_size(t.shape)
      zeros = List.duplicate(0, rank - 1)
      ones = List.duplicate(1, rank)

      part = fn start, n ->
        slice(
          %{out | shape: put_elem(out.shape, 0, n)},
          t,
          [start | zeros],
          [n | tl(Tuple.to_list(t.shape))],
          ones
        )
      end

      Stream.map(0..last//1, fn
        ^full -> concatenate(out, [part.(full * batch, left), part.(0, batch - left)], 0)
        i -> part.(i * batch, batch)
      end)
    end

    # the port takes at most 64 inputs an op: more are joined 64 at a time
    # (each a native concatenate), then those
    @impl true
    def concatenate(out, tensors, axis) when length(tensors) > 64 do
      parts =
        for chunk <- Enum.chunk_every(tensors, 64) do
          n = Enum.reduce(chunk, 0, &(elem(&1.shape, axis) + &2))
          concatenate(%{out | shape: put_elem(out.shape, axis, n)}, chunk, axis)
        end

      concatenate(out, parts, axis)
    end

    def concatenate(out, tensors, axis) do
      if words?(out, tensors) do
        native_words(:concatenate, out, tensors, [out, tensors, axis], fn g, w ->
          {g, vs} =
            Enum.reduce(tensors, {g, []}, fn t, {g, vs} ->
              {g, v} = G.word_input(g, t, w)
              {g, [v | vs]}
            end)

          G.op(g, "concatenate", Enum.reverse(vs), %{"axis" => axis})
        end)
      else
        concatenate_native(out, tensors, axis)
      end
    end

    defp concatenate_native(out, tensors, axis) do
      if nat?([out.type], device_of(tensors)) do
        native(:concatenate, out, tensors, [out, tensors, axis], fn g ->
          {g, vs} =
            Enum.reduce(tensors, {g, []}, fn t, {g, vs} ->
              {g, v} = G.input(g, t, out.type)
              {g, [v | vs]}
            end)

          G.op(g, "concatenate", Enum.reverse(vs), %{"axis" => axis})
        end)
      else
        fallback(:concatenate, [out, tensors, axis])
      end
    end

    @impl true
    def iota(out, axis, opts) do
      device = opts_device(opts)

      cond do
        nat?([out.type], device) and Nx.size(out) > 0 ->
          s = server(device)
          attrs = %{"shape" => Tuple.to_list(out.shape), "dtype" => G.dtype(out.type)}
          attrs = if axis, do: Map.put(attrs, "axis", axis), else: attrs
          {g, v} = G.op(new_graph(s, device), "iota", [], attrs)

          case G.run(g, [v]) do
            {:ok, [%{"handle" => h} = o]} ->
              count(:iota, :native, device)
              %{out | data: %__MODULE__{server: s, handle: h, ref: o[:ref], device: device}}

            _ ->
              fallback(:iota, [out, axis, []])
          end

        # s64/u64 held as words: 0..n-1 < 2^31, the low words count, the
        # high words are zero
        int64_type?(out.type) and words(out.type, device) == 2 and Nx.size(out) > 1 ->
          native_words(
            :iota,
            out,
            [%T{out | data: %__MODULE__{device: device}}],
            [out, axis, []],
            fn g, 2 ->
              shape = Tuple.to_list(out.shape)
              attrs = %{"shape" => shape, "dtype" => "i32"}
              attrs = if axis, do: Map.put(attrs, "axis", axis), else: attrs
              {g, lo} = G.op(g, "iota", [], attrs)
              {g, hi} = G.op(g, "subtract", [lo, lo])
              {g, lo} = G.op(g, "reshape", [lo], %{"shape" => shape ++ [1]})
              {g, hi} = G.op(g, "reshape", [hi], %{"shape" => shape ++ [1]})
              G.op(g, "concatenate", [lo, hi], %{"axis" => length(shape)})
            end
          )

        true ->
          count(:iota, :fallback, device, [out.type])
          from_host_deep(Nx.BinaryBackend.iota(out, axis, []), device)
      end
    end

    @impl true
    def eye(out, opts) do
      device = opts_device(opts)

      with true <- nat?([out.type], device) and Nx.size(out) > 0,
           s = server(device),
           attrs = %{"shape" => Tuple.to_list(out.shape), "dtype" => G.dtype(out.type)},
           {g, v} = G.op(new_graph(s, device), "eye", [], attrs),
           {:ok, [%{"handle" => h} = o]} <- G.run(g, [v]) do
        count(:eye, :native, device)
        %{out | data: %__MODULE__{server: s, handle: h, ref: o[:ref], device: device}}
      else
        _ ->
          count(:eye, :fallback, device, [out.type])
          from_host_deep(Nx.BinaryBackend.eye(out, []), device)
      end
    end

    # ---------------------------------------------------------------- dot

    @impl true
    def dot(out, a, ca, ba, b, cb, bb) do
      # floats in their own type; integers in i32 (results of 8 to 32 bits)
      # or i64 (64 bits), wrapping, then cast: the same low bits as Nx's
      # exact sum written into the result type
      ct =
        case out.type do
          {k, _} when k in [:f, :bf] -> out.type
          {k, 64} when k in [:s, :u] -> {:s, 64}
          {k, _} when k in [:s, :u] -> {:s, 32}
          _ -> nil
        end

      d = device_of([a, b])

      cond do
        ct == nil or not nat?([out.type, ct], d) ->
          fallback(:dot, [out, a, ca, ba, b, cb, bb])

        Nx.size(out) == 0 ->
          empty(:dot, out, d)

        # an empty contraction: every sum is 0
        Nx.size(a) == 0 or Nx.size(b) == 0 ->
          native(:dot, out, [a, b], [out, a, ca, ba, b, cb, bb], fn g ->
            {g, z} = G.scalar(g, 0, out.type)
            broadcast_to(g, z, out)
          end)

        true ->
          native(:dot, out, [a, b], [out, a, ca, ba, b, cb, bb], fn g ->
            {g, r} = dot_graph(g, out, ct, a, ca, ba, b, cb, bb)
            G.cast(g, r, ct, out.type)
          end)
      end
    end

    # a to [B, M, K], b to [B, K, N] (transposes and reshapes), one batched
    # product in type ct, then out's shape
    defp dot_graph(g, out, ct, a, ca, ba, b, cb, bb) do
      {g, x} = G.input(g, a, ct)
      {g, y} = G.input(g, b, ct)
      ra = Nx.rank(a)
      rb = Nx.rank(b)
      fa = Enum.to_list(0..(ra - 1)//1) -- (ca ++ ba)
      fb = Enum.to_list(0..(rb - 1)//1) -- (cb ++ bb)
      dim = fn t, axes -> Enum.reduce(axes, 1, &(elem(t.shape, &1) * &2)) end
      bsz = dim.(a, ba)
      m = dim.(a, fa)
      k = dim.(a, ca)
      n = dim.(b, fb)
      {g, x} = permute(g, x, ba ++ fa ++ ca, ra)
      {g, y} = permute(g, y, bb ++ cb ++ fb, rb)
      {g, x} = G.op(g, "reshape", [x], %{"shape" => [bsz, m, k]})
      {g, y} = G.op(g, "reshape", [y], %{"shape" => [bsz, k, n]})
      {g, r} = G.op(g, "dot", [x, y])
      G.op(g, "reshape", [r], %{"shape" => Tuple.to_list(out.shape)})
    end

    defp permute(g, v, perm, rank) do
      if perm == Enum.to_list(0..(rank - 1)//1),
        do: {g, v},
        else: G.op(g, "transpose", [v], %{"perm" => perm})
    end

    # ------------------------------------------- scans, sorting, windows

    # the result has the input's type (Nx's scans and windows); types the
    # device stores run natively, the rest fall back
    for name <- ~w(cumulative_sum cumulative_product cumulative_max cumulative_min)a do
      @impl true
      def unquote(name)(out, t, opts) do
        if nat?([t.type], device_of([t])) and t.type == out.type do
          native(
            unquote(name),
            out,
            [t],
            {:host, t, &apply(Nx, unquote(name), [&1, opts])},
            fn g ->
              {g, x} = G.input(g, t, t.type)

              attrs = %{
                "axis" => Keyword.get(opts, :axis, 0),
                "reverse" => Keyword.get(opts, :reverse, false)
              }

              G.op(g, unquote(Atom.to_string(name)), [x], attrs)
            end
          )
        else
          fallback(unquote(name), {:host, t, &apply(Nx, unquote(name), [&1, opts])})
        end
      end
    end

    # stable whatever :stable says (Nx allows an unstable sort to be stable)
    @impl true
    def sort(out, t, opts) do
      if nat?([t.type], device_of([t])) and t.type == out.type do
        native(:sort, out, [t], [out, t, opts], fn g ->
          {g, x} = G.input(g, t, t.type)
          G.op(g, "sort", [x], sort_attrs(opts))
        end)
      else
        fallback(:sort, [out, t, opts])
      end
    end

    @impl true
    def argsort(out, t, opts) do
      d = device_of([t])

      if nat?([t.type, out.type], d) and match?({k, _} when k in [:s, :u], out.type) do
        native(:argsort, out, [t], [out, t, opts], fn g ->
          {g, x} = G.input(g, t, t.type)
          G.op(g, "argsort", [x], Map.put(sort_attrs(opts), "dtype", G.dtype(out.type)))
        end)
      else
        fallback(:argsort, [out, t, opts])
      end
    end

    defp sort_attrs(opts),
      do: %{
        "axis" => Keyword.get(opts, :axis, 0),
        "direction" => Atom.to_string(Keyword.get(opts, :direction, :asc))
      }

    # {values, indices}: two engine ops (top_k, top_k_indices); elsewhere
    # Nx's own definition (argsort descending, take_along_axis, slice)
    @impl true
    def top_k({out_v, out_i}, t, opts) do
      d = device_of([t])
      k = Keyword.get(opts, :k, 1)
      host = {:host, t, &Nx.top_k(&1, k: k)}

      if nat?([t.type, out_i.type], d) and match?({kk, _} when kk in [:s, :u], out_i.type) do
        v =
          native(:top_k, out_v, [t], host, fn g ->
            {g, x} = G.input(g, t, t.type)
            G.op(g, "top_k", [x], %{"k" => k})
          end)

        case v do
          {_, _} ->
            v

          _ ->
            i =
              native(:top_k, out_i, [t], host, fn g ->
                {g, x} = G.input(g, t, t.type)
                G.op(g, "top_k_indices", [x], %{"k" => k, "dtype" => G.dtype(out_i.type)})
              end)

            if is_tuple(i), do: i, else: {v, i}
        end
      else
        fallback(:top_k, host)
      end
    end

    for name <- ~w(window_sum window_product window_max window_min)a do
      @impl true
      def unquote(name)(out, t, window_dimensions, opts) do
        d = device_of([t])

        cond do
          Nx.size(out) == 0 ->
            empty(unquote(name), out, d)

          nat?([t.type], d) and t.type == out.type ->
            native(unquote(name), out, [t], [out, t, window_dimensions, opts], fn g ->
              {g, x} = G.input(g, t, t.type)
              rank = Nx.rank(t)

              attrs = %{
                "window_dimensions" => Tuple.to_list(window_dimensions),
                "strides" => opts[:strides] || List.duplicate(1, rank),
                "window_dilations" => opts[:window_dilations] || List.duplicate(1, rank),
                "padding" =>
                  Enum.map(opts[:padding] || List.duplicate({0, 0}, rank), &Tuple.to_list/1)
              }

              G.op(g, unquote(Atom.to_string(name)), [x], attrs)
            end)

          true ->
            fallback(unquote(name), [out, t, window_dimensions, opts])
        end
      end
    end

    # each window's selected element (the last of its largest / smallest,
    # as Nx.BinaryBackend) gets the window's source added onto init_value.
    # x is compared in the type Nx.BinaryBackend pads it to (an integer x
    # with a float init_value: f32); padding is never selected (XLA's rule:
    # Nx.BinaryBackend 0.7.3 scatters padded windows to shifted positions)
    for name <- ~w(window_scatter_max window_scatter_min)a do
      @impl true
      def unquote(name)(out, t, source, init_value, window_dimensions, opts) do
        cmp =
          if float?(init_value.type) and match?({k, _} when k in [:s, :u], t.type),
            do: {:f, 32},
            else: t.type

        d = device_of([t, source, init_value])
        args = [out, t, source, init_value, window_dimensions, opts]

        cond do
          Nx.size(out) == 0 ->
            empty(unquote(name), out, d)

          nat?([cmp, out.type], d) ->
            native(unquote(name), out, [t, source, init_value], args, fn g ->
              {g, x} = G.input(g, t, cmp)
              {g, s} = G.input(g, source, out.type)
              {g, v} = G.input(g, init_value, out.type)
              {g, v} = G.op(g, "reshape", [v], %{"shape" => []})
              rank = Nx.rank(t)

              attrs = %{
                "window_dimensions" => Tuple.to_list(window_dimensions),
                "strides" => opts[:strides] || List.duplicate(1, rank),
                "padding" =>
                  Enum.map(opts[:padding] || List.duplicate({0, 0}, rank), &Tuple.to_list/1)
              }

              G.op(g, unquote(Atom.to_string(name)), [x, s, v], attrs)
            end)

          true ->
            fallback(unquote(name), args)
        end
      end
    end

    # ------------------------------------------------------------ conv

    @impl true
    def conv(out, t, k, opts) do
      if float?(out.type) and nat?([out.type], device_of([t, k])) do
        native(:conv, out, [t, k], [out, t, k, opts], fn g ->
          {g, x} = G.input(g, t, out.type)
          {g, w} = G.input(g, k, out.type)

          G.op(g, "conv", [x, w], %{
            "strides" => opts[:strides],
            "padding" => Enum.map(opts[:padding], fn {lo, hi} -> [lo, hi] end),
            "input_dilation" => opts[:input_dilation],
            "kernel_dilation" => opts[:kernel_dilation],
            "feature_group_size" => opts[:feature_group_size],
            "batch_group_size" => opts[:batch_group_size],
            "input_permutation" => opts[:input_permutation],
            "kernel_permutation" => opts[:kernel_permutation],
            "output_permutation" => opts[:output_permutation]
          })
        end)
      else
        fallback(:conv, [out, t, k, opts])
      end
    end

    # ------------------------------------------------------ linear algebra

    # f32 for every float type but f64 (f16 and bf16 computed in f32 and
    # rounded once); nil where the engine has no kernel (complex)
    defp linalg_type({:f, 64}), do: {:f, 64}
    defp linalg_type({k, _}) when k in [:f, :bf], do: {:f, 32}
    defp linalg_type(_), do: nil

    @impl true
    def cholesky(out, t) do
      ct = linalg_type(out.type)

      if ct != nil and nat?([out.type, ct], device_of([t])) do
        native(:cholesky, out, [t], [out, t], fn g ->
          {g, x} = G.input(g, t, ct)
          {g, r} = G.op(g, "cholesky", [x])
          G.cast(g, r, ct, out.type)
        end)
      else
        fallback(:cholesky, [out, t])
      end
    end

    @impl true
    def triangular_solve(out, a, b, opts) do
      ct = linalg_type(out.type)

      if ct != nil and nat?([out.type, ct], device_of([a, b])) do
        singular!(a)

        native(:triangular_solve, out, [a, b], [out, a, b, opts], fn g ->
          {g, x} = G.input(g, a, ct)
          {g, y} = G.input(g, b, ct)

          {g, r} =
            G.op(g, "triangular_solve", [x, y], %{
              "left_side" => opts[:left_side] != false,
              "lower" => opts[:lower] != false,
              "transform_a" => Atom.to_string(opts[:transform_a] || :none)
            })

          G.cast(g, r, ct, out.type)
        end)
      else
        fallback(:triangular_solve, [out, a, b, opts])
      end
    end

    # Nx raises for a zero on the diagonal: the diagonals (a strided slice of
    # the flattened matrices) compared with 0 on the device, one byte back
    defp singular!(a) do
      n = elem(a.shape, tuple_size(a.shape) - 1)
      batch = div(Nx.size(a), max(n * n, 1))

      if n > 0 and batch > 0 do
        zero =
          a
          |> Nx.reshape({batch, n * n})
          |> Nx.slice([0, 0], [batch, n * n], strides: [1, n + 1])
          |> Nx.equal(0)
          |> Nx.reduce_max()
          |> Nx.to_number()

        if zero != 0, do: raise(ArgumentError, "can't solve for singular matrix")
      end

      :ok
    end

    # ------------------------------------------------------------ fallback

    @native_defs [
                   :init,
                   :constant,
                   :from_binary,
                   :to_binary,
                   :inspect,
                   :backend_copy,
                   :backend_transfer,
                   :backend_deallocate,
                   :add,
                   :subtract,
                   :multiply,
                   :max,
                   :min,
                   :divide,
                   :pow,
                   :atan2,
                   :remainder,
                   :equal,
                   :not_equal,
                   :less,
                   :less_equal,
                   :greater,
                   :greater_equal,
                   :abs,
                   :negate,
                   :sign,
                   :floor,
                   :ceil,
                   :round,
                   :is_nan,
                   :is_infinity,
                   :select,
                   :clip,
                   :sum,
                   :product,
                   :reduce_max,
                   :reduce_min,
                   :argmax,
                   :argmin,
                   :all,
                   :any,
                   :bitwise_not,
                   :count_leading_zeros,
                   :population_count,
                   :logical_and,
                   :logical_or,
                   :logical_xor,
                   :logical_not,
                   :all_close,
                   :as_type,
                   :bitcast,
                   :reshape,
                   :squeeze,
                   :transpose,
                   :reverse,
                   :broadcast,
                   :slice,
                   :concatenate,
                   :iota,
                   :eye,
                   :dot,
                   :to_batched,
                   :cumulative_sum,
                   :cumulative_product,
                   :cumulative_max,
                   :cumulative_min,
                   :sort,
                   :argsort,
                   :top_k,
                   :window_sum,
                   :window_product,
                   :window_max,
                   :window_min,
                   :window_scatter_max,
                   :window_scatter_min,
                   :conv,
                   :cholesky,
                   :triangular_solve,
                   :pad,
                   :put_slice,
                   :gather,
                   :take,
                   :take_along_axis,
                   :indexed_add,
                   :indexed_put
                 ] ++ @float_unary ++ @int_binary

    Code.ensure_loaded!(Nx.BinaryBackend)

    for {name, arity} <- Nx.Backend.behaviour_info(:callbacks),
        name not in @native_defs,
        function_exported?(Nx.BinaryBackend, name, arity) do
      args = Macro.generate_arguments(arity, __MODULE__)

      @impl true
      def unquote(name)(unquote_splicing(args)), do: fallback(unquote(name), unquote(args))
    end

    @doc "The callbacks this backend runs natively for some types (the rest always fall back)."
    def native_callbacks, do: @native_defs
  end
end
