class Program_weight_tensor_meta_in_0:
	name = "in_0"
	original_name = "in_0"
	shape = [4, 1, 10]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 1.0
	data = None


class Program_weight_tensor_meta_in_1:
	name = "in_1"
	original_name = "in_1"
	shape = [4, 10, 8]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 1.0
	data = None


class Program_weight_tensor_meta_in_2:
	name = "in_2"
	original_name = "in_2"
	shape = [4, 8, 10]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 1.0
	data = None


class Program_weight_tensor_meta_in_3:
	name = "in_3"
	original_name = "in_3"
	shape = [10]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 1.0
	data = None


