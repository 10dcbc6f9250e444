defmodule Nxvk.JSON do
  @moduledoc false
  # A small JSON encoder and decoder for the port's headers: Elixir 1.14 /
  # OTP 25 ship none, and the project takes no dependencies.
  #
  # Encoding: maps (keys in map order), {:object, [{key, value}, ...]} (keys
  # in list order, where the order means something), lists, strings, atoms
  # (as strings; nil, true, false as themselves), integers and floats.
  # Decoding: objects become maps with string keys.

  @spec encode!(term) :: binary
  def encode!(term), do: IO.iodata_to_binary(enc(term))

  defp enc(nil), do: "null"
  defp enc(true), do: "true"
  defp enc(false), do: "false"
  defp enc(a) when is_atom(a), do: enc_string(Atom.to_string(a))
  defp enc(s) when is_binary(s), do: enc_string(s)
  defp enc(i) when is_integer(i), do: Integer.to_string(i)
  # shortest text that reads back as the same double
  defp enc(f) when is_float(f), do: Float.to_string(f)
  defp enc({:object, pairs}) when is_list(pairs), do: enc_pairs(pairs)
  defp enc(m) when is_map(m), do: enc_pairs(Map.to_list(m))
  defp enc(l) when is_list(l), do: ["[", Enum.map_intersperse(l, ",", &enc/1), "]"]

  defp enc_pairs(pairs) do
    [
      "{",
      Enum.map_intersperse(pairs, ",", fn {k, v} -> [enc_string(to_string(k)), ":", enc(v)] end),
      "}"
    ]
  end

  # most strings (keys, names, dtypes) need no escape: no copy then
  defp enc_string(s), do: if(plain?(s), do: [?", s, ?"], else: [?", escape(s, <<>>), ?"])

  defp plain?(<<c, rest::binary>>) when c >= 0x20 and c != ?" and c != ?\\, do: plain?(rest)
  defp plain?(<<>>), do: true
  defp plain?(_), do: false

  defp escape(<<>>, acc), do: acc
  defp escape(<<?", rest::binary>>, acc), do: escape(rest, <<acc::binary, ?\\, ?">>)
  defp escape(<<?\\, rest::binary>>, acc), do: escape(rest, <<acc::binary, ?\\, ?\\>>)
  defp escape(<<?\n, rest::binary>>, acc), do: escape(rest, <<acc::binary, ?\\, ?n>>)
  defp escape(<<?\r, rest::binary>>, acc), do: escape(rest, <<acc::binary, ?\\, ?r>>)
  defp escape(<<?\t, rest::binary>>, acc), do: escape(rest, <<acc::binary, ?\\, ?t>>)

  defp escape(<<c, rest::binary>>, acc) when c < 0x20 do
    hex = c |> Integer.to_string(16) |> String.pad_leading(4, "0")
    escape(rest, <<acc::binary, "\\u", hex::binary>>)
  end

  defp escape(<<c, rest::binary>>, acc), do: escape(rest, <<acc::binary, c>>)

  # ------------------------------------------------------------- decoding

  @spec decode(binary) :: {:ok, term} | {:error, String.t()}
  def decode(bin) when is_binary(bin) do
    case value(skip(bin)) do
      {v, rest} ->
        case skip(rest) do
          "" ->
            {:ok, v}

          more ->
            {:error,
             "text after the JSON value: #{inspect(binary_part(more, 0, min(20, byte_size(more))))}"}
        end
    end
  catch
    {:json_error, why} -> {:error, why}
  end

  defp fail(why), do: throw({:json_error, why})

  # inlined: the port's compact JSON has no white space, so the usual case
  # is one match and no call
  @compile {:inline, skip: 1}
  defp skip(<<c, _::binary>> = bin) when c in [?\s, ?\t, ?\n, ?\r], do: skip_ws(bin)
  defp skip(bin), do: bin

  defp skip_ws(<<c, rest::binary>>) when c in [?\s, ?\t, ?\n, ?\r], do: skip_ws(rest)
  defp skip_ws(bin), do: bin

  defp value(<<?{, rest::binary>>), do: object(skip(rest), %{})
  defp value(<<?[, rest::binary>>), do: array(skip(rest), [])
  defp value(<<?", rest::binary>>), do: string(rest, [])
  defp value(<<"true", rest::binary>>), do: {true, rest}
  defp value(<<"false", rest::binary>>), do: {false, rest}
  defp value(<<"null", rest::binary>>), do: {nil, rest}
  defp value(<<c, _::binary>> = bin) when c == ?- or c in ?0..?9, do: number(bin)
  defp value(<<>>), do: fail("unexpected end of JSON")
  defp value(<<c, _::binary>>), do: fail("unexpected character #{inspect(<<c>>)}")

  defp object(<<?}, rest::binary>>, acc), do: {acc, rest}

  defp object(<<?", rest::binary>>, acc) do
    {key, rest} = string(rest, [])

    case skip(rest) do
      <<?:, rest::binary>> ->
        {v, rest} = value(skip(rest))
        acc = Map.put(acc, key, v)

        case skip(rest) do
          <<?,, rest::binary>> -> object_key(skip(rest), acc)
          <<?}, rest::binary>> -> {acc, rest}
          _ -> fail("expected , or } in an object")
        end

      _ ->
        fail("expected : after an object key")
    end
  end

  defp object(_, _), do: fail("expected a string key or } in an object")

  defp object_key(<<?", _::binary>> = bin, acc), do: object(bin, acc)
  defp object_key(_, _), do: fail("expected a string key after ,")

  defp array(<<?], rest::binary>>, acc), do: {Enum.reverse(acc), rest}

  defp array(bin, acc) do
    {v, rest} = value(bin)

    case skip(rest) do
      <<?,, rest::binary>> -> array_next(skip(rest), [v | acc])
      <<?], rest::binary>> -> {Enum.reverse([v | acc]), rest}
      _ -> fail("expected , or ] in a list")
    end
  end

  defp array_next(<<?], _::binary>>, _), do: fail("trailing , in a list")
  defp array_next(bin, acc), do: array(bin, acc)

  defp string(<<?", rest::binary>>, [run]), do: {run, rest}
  defp string(<<?", rest::binary>>, acc), do: {IO.iodata_to_binary(Enum.reverse(acc)), rest}

  defp string(<<?\\, e, rest::binary>>, acc) when e in [?", ?\\, ?/],
    do: string(rest, [<<e>> | acc])

  defp string(<<?\\, ?b, rest::binary>>, acc), do: string(rest, ["\b" | acc])
  defp string(<<?\\, ?f, rest::binary>>, acc), do: string(rest, ["\f" | acc])
  defp string(<<?\\, ?n, rest::binary>>, acc), do: string(rest, ["\n" | acc])
  defp string(<<?\\, ?r, rest::binary>>, acc), do: string(rest, ["\r" | acc])
  defp string(<<?\\, ?t, rest::binary>>, acc), do: string(rest, ["\t" | acc])

  defp string(<<?\\, ?u, h1::binary-size(4), ?\\, ?u, h2::binary-size(4), rest::binary>>, acc)
       when binary_part(h1, 0, 1) in ["d", "D"] do
    hi = hex(h1)
    lo = hex(h2)

    if hi in 0xD800..0xDBFF and lo in 0xDC00..0xDFFF do
      cp = 0x10000 + (hi - 0xD800) * 0x400 + (lo - 0xDC00)
      string(rest, [<<cp::utf8>> | acc])
    else
      fail("bad UTF-16 surrogate pair in a string")
    end
  end

  defp string(<<?\\, ?u, h::binary-size(4), rest::binary>>, acc) do
    cp = hex(h)
    if cp in 0xD800..0xDFFF, do: fail("lone UTF-16 surrogate in a string")
    string(rest, [<<cp::utf8>> | acc])
  end

  defp string(<<?\\, _::binary>>, _), do: fail("bad escape in a string")
  defp string(<<c, _::binary>>, _) when c < 0x20, do: fail("control character in a string")

  defp string(bin, acc) do
    # copy the run of plain bytes up to the next quote or backslash at once
    n = plain_run(bin, 0)

    case bin do
      <<run::binary-size(n), rest::binary>> when n > 0 -> string(rest, [run | acc])
      _ -> fail("unterminated string")
    end
  end

  defp plain_run(bin, n) do
    case bin do
      <<_::binary-size(n), c, _::binary>> when c != ?" and c != ?\\ and c >= 0x20 ->
        plain_run(bin, n + 1)

      _ ->
        n
    end
  end

  defp hex(h) do
    case Integer.parse(h, 16) do
      {v, ""} -> v
      _ -> fail("bad \\u escape")
    end
  end

  # integers (handles, ids, dimensions: nearly every number of a reply) in
  # one pass; anything with a fraction or an exponent by the general path
  defp number(<<?-, c, _::binary>> = bin) when c in ?1..?9 do
    <<?-, rest::binary>> = bin

    case digits(rest, 0) do
      {v, rest} -> {-v, rest}
      :general -> general_number(bin)
    end
  end

  defp number(<<c, _::binary>> = bin) when c in ?1..?9 do
    case digits(bin, 0) do
      {v, rest} -> {v, rest}
      :general -> general_number(bin)
    end
  end

  defp number(bin), do: general_number(bin)

  defp digits(<<c, rest::binary>>, acc) when c in ?0..?9, do: digits(rest, acc * 10 + (c - ?0))
  defp digits(<<c, _::binary>>, _acc) when c in [?., ?e, ?E, ?-, ?+], do: :general
  defp digits(rest, acc), do: {acc, rest}

  defp general_number(bin) do
    {text, rest} = take_number(bin, 0)

    parsed =
      if String.contains?(text, [".", "e", "E"]),
        do: Float.parse(text),
        else: Integer.parse(text)

    case parsed do
      {v, ""} -> {v, rest}
      _ -> fail("bad number #{inspect(text)}")
    end
  end

  defp take_number(bin, n) do
    case bin do
      <<_::binary-size(n), c, _::binary>> when c in ?0..?9 or c in [?-, ?+, ?., ?e, ?E] ->
        take_number(bin, n + 1)

      <<text::binary-size(n), rest::binary>> ->
        {text, rest}
    end
  end
end
